"""Maintenance windows as Datadog downtimes, end to end: the real CLI and client against the fake Datadog."""

from __future__ import annotations

from pathlib import Path

from .conftest import Obs
from .fakedd import FakeDatadog

MARKER = "managed-by:obs obs-key:"


def live_downtimes(dd: FakeDatadog) -> dict[str, dict[str, object]]:
    """Downtimes that are not canceled, by the key in their marker line (or their id when unmarked)."""
    found = {}
    for item in dd.downtimes.values():
        attributes = item["attributes"]
        if attributes["canceled"] is not None:
            continue
        lines = (attributes.get("message") or "").splitlines()
        keys = [line.removeprefix(MARKER) for line in lines if line.startswith(MARKER)]
        found[keys[0] if keys else item["id"]] = attributes
    return found


def changes(plan: dict[str, object]) -> dict[str, str]:
    return {c["key"]: c["action"] for c in plan["changes"] if c["action"] != "unchanged"}  # type: ignore[attr-defined]


def test_sync_creates_the_downtimes_and_the_plan_after_is_empty(obs: Obs, dd: FakeDatadog) -> None:
    assert obs("sync", "--env", "prod") == 0, obs.err
    assert "Applied: 61 created, 0 updated, 0 deleted, 0 failed" in obs.out
    downtimes = live_downtimes(dd)
    assert len(downtimes) == 11
    age = downtimes["prod/default/age/maintenance/nightly-migrations"]
    assert age["monitor_identifier"] == {"monitor_tags": ["env:prod", "managed-by:obs", "metric:age", "queue:default"]}
    # The server filled in a recurrence start obs did not send (and shows a status and current_downtime).
    assert age["schedule"]["recurrences"][0]["start"]  # type: ignore[index]
    # Neither the DLQ nor the delivery failures are muted, nor the parking queue's retention risk.
    assert not [k for k in downtimes if "/dlq/" in k or "delivery_failures" in k or "retention_risk" in k]

    assert obs("plan", "--env", "prod", "--detailed-exitcode") == 0, obs.out
    assert "Plan: 0 to create, 0 to update, 0 to delete, 61 unchanged, 0 unmanaged." in obs.out


def test_a_hand_made_downtime_is_never_touched(obs: Obs, dd: FakeDatadog) -> None:
    made = dd.create_downtime(
        {"scope": "*", "monitor_identifier": {"monitor_tags": ["queue:default"]}, "message": "by hand"}
    )
    assert obs("sync", "--env", "prod") == 0, obs.err
    assert obs("sync", "--env", "prod") == 0, obs.err
    assert dd.downtimes[made["id"]]["attributes"]["canceled"] is None
    assert dd.downtimes[made["id"]]["attributes"]["message"] == "by hand"


def test_a_removed_window_is_canceled_and_a_changed_one_updated(obs: Obs, dd: FakeDatadog) -> None:
    assert obs("sync", "--env", "prod") == 0, obs.err
    prod = obs.definitions / "environments" / "prod.yaml"
    text = prod.read_text()
    prod.write_text(text.replace("BYHOUR=1;", "BYHOUR=2;"))
    plan = obs.plan()
    assert set(changes(plan).values()) == {"update"}
    updated = [c for c in plan["changes"] if c["action"] == "update" and c["kind"] == "downtime"]
    assert len(updated) == 11
    assert obs("sync", "--env", "prod") == 0, obs.err
    assert obs("plan", "--env", "prod", "--detailed-exitcode") == 0, obs.out

    prod.write_text(text[: text.index("# Nightly database migrations")])
    plan = obs.plan()
    deleted = {k for k, a in changes(plan).items() if a == "delete"}
    assert len(deleted) == 11 and all("/maintenance/" in k for k in deleted)
    assert obs("sync", "--env", "prod") == 1  # the mass-delete guard counts downtimes like monitors
    assert "refusing to delete 11 of the 61 objects" in obs.err
    assert obs("sync", "--env", "prod", "--allow-mass-delete") == 0, obs.err
    assert live_downtimes(dd) == {}
    assert obs("plan", "--env", "prod", "--detailed-exitcode") == 0, obs.out


def test_an_edit_in_the_ui_shows_as_drift_and_is_reverted(obs: Obs, dd: FakeDatadog) -> None:
    assert obs("sync", "--env", "prod") == 0, obs.err
    (item,) = [d for d in dd.downtimes.values() if "prod/low/depth/maintenance" in (d["attributes"]["message"] or "")]
    item["attributes"]["schedule"]["recurrences"][0]["duration"] = "1h"
    assert changes(obs.plan()) == {"prod/low/depth/maintenance/nightly-migrations": "update"}
    assert obs("sync", "--env", "prod") == 0, obs.err
    assert obs("plan", "--env", "prod", "--detailed-exitcode") == 0, obs.out


def test_an_ad_hoc_window_survives_a_sync_until_ended(obs: Obs, dd: FakeDatadog) -> None:
    assert obs("sync", "--env", "prod") == 0, obs.err
    code = obs("maintenance", "start", "--env", "prod", "--queue", "high", "--for", "2h", "--reason", "disk swap")
    assert code == 0, obs.err
    started = {k: v for k, v in live_downtimes(dd).items() if "/maintenance/" not in k}
    assert len(started) == 6  # age, backlog, depth, in-flight, CPU and memory of `high`
    assert all("disk swap" in str(a["message"]) for a in started.values())
    assert obs("plan", "--env", "prod", "--detailed-exitcode") == 0, obs.out
    assert obs("sync", "--env", "prod") == 0, obs.err
    assert len(live_downtimes(dd)) == 11 + 6

    assert obs("maintenance", "list", "--env", "prod") == 0, obs.err
    assert "nightly-migrations" in obs.out and "disk swap" in obs.out and "ad-hoc" in obs.out
    assert "1 h 59 min left" in obs.out or "2 h left" in obs.out

    assert obs("maintenance", "end", "--env", "prod", "--queue", "high") == 0, obs.err
    assert "ended 6 ad-hoc downtimes" in obs.out
    assert len(live_downtimes(dd)) == 11


def test_maintenance_refuses_an_unknown_queue(obs: Obs, dd: FakeDatadog) -> None:
    assert obs("maintenance", "start", "--env", "prod", "--queue", "nope", "--for", "1h") == 1
    assert "unknown queue 'nope'" in obs.err


def test_maintenance_help(obs: Obs) -> None:
    for sub in ("start", "end", "list"):
        try:
            obs("maintenance", sub, "--help")
        except SystemExit as exc:
            assert exc.code == 0
        assert "--env" in obs.capsys.readouterr().out or "--env" in obs.out


def write(path: Path, text: str) -> None:
    path.write_text(text)
