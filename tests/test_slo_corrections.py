"""Planned windows as SLO corrections, end to end: the real CLI and client against the fake Datadog, on small
definitions of their own (one queue with an SLO, one window)."""

from __future__ import annotations

import shutil
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from sync.core.diff import diff
from sync.core.kinds import KINDS, SLO_CORRECTION
from sync.core.plan import Live, make_plan
from sync.core.resources import Resource
from sync.datadog.client import Datadog, RequestFailed
from sync.datadog.credentials import Endpoint
from sync.definitions.load import load
from sync.errors import ObsError
from sync.expand.correction_time import Unmappable, recurrence
from sync.expand.desired import expand

from .conftest import ROOT, Obs, Run, commit, git
from .fakedd import LOST_RESPONSE, FakeDatadog
from .fakedd.common import Rejected
from .fakedd.corrections import Corrections

FIXTURE = ROOT / "tests" / "fixtures" / "evaluation"
MARKER = "managed-by:obs obs-key:"
KEY = "prod/jobs/slo/maintenance/nightly"
WINDOW = """\
maintenance:
  - name: nightly
    description: Workers stop; jobs wait.
    schedule: {rrule: "FREQ=DAILY;BYHOUR=19;BYMINUTE=0", duration: 2h, timezone: Europe/Berlin}
    queues: all
    mutes: [age]
"""


@pytest.fixture
def defs(tmp_path: Path) -> Path:
    folder = tmp_path / "defs"
    shutil.copytree(FIXTURE, folder)
    env = folder / "environments" / "prod.yaml"
    env.write_text(env.read_text() + WINDOW)
    return folder


@pytest.fixture
def small(defs: Path, capsys: pytest.CaptureFixture[str]) -> Obs:
    return Obs(defs, capsys)


def corrections(dd: FakeDatadog) -> dict[str, dict[str, Any]]:
    """Live corrections by the key on their description's last line (or their id when unmarked)."""
    found = {}
    for item in dd.corrections.values():
        last = (item["attributes"]["description"] or "").splitlines()[-1]
        found[last.removeprefix(MARKER) if last.startswith(MARKER) else item["id"]] = item["attributes"]
    return found


def pending(plan: dict[str, Any]) -> dict[str, str]:
    return {c["key"]: c["action"] for c in plan["changes"] if c["action"] != "unchanged"}


def test_the_kind_record_says_what_a_correction_is() -> None:
    assert [k.name for k in KINDS] == ["slo", "dashboard", "monitor", "composite", "downtime", "slo-correction"]
    # Written after the SLO it names by ID (KINDS order), deleted before it; a move to another SLO, or from a
    # recurring to a one-time correction, is a delete and create.
    rules = SLO_CORRECTION.diff
    assert SLO_CORRECTION.links and rules.fixed == "slo_id" and rules.recreate_on == ("rrule",)
    assert SLO_CORRECTION.listing.marker == "description" and not SLO_CORRECTION.notifies
    assert not SLO_CORRECTION.api.validates


def test_sync_creates_the_correction_after_its_slo_and_the_plan_after_is_empty(small: Obs, dd: FakeDatadog) -> None:
    assert small("sync", "--env", "prod") == 0, small.err
    assert "Applied: 8 created, 0 updated, 0 deleted, 0 failed" in small.out
    (slo_id,) = dd.slos
    live = corrections(dd)[KEY]
    # The window (19:00 Berlin, 2 h) plus the queue's drain grace (1 min), in data time: no metrics' delay.
    assert (live["slo_id"], live["category"], live["rrule"], live["duration"]) == (
        slo_id,
        "Scheduled Maintenance",
        "FREQ=DAILY",
        (120 + 1) * 60,
    )
    assert live["timezone"] == "Europe/Berlin" and live["end"] is None
    start = datetime.fromtimestamp(live["start"], UTC)
    assert (start.hour, start.minute, start.weekday()) == (18, 0, 0)  # 19:00 in Berlin on a Monday in January
    assert "Workers stop" not in live["description"]  # the window's own words are user text: never there
    posts = [r.path for r in dd.log if r.method == "POST" and r.path.startswith("/api/v1/slo")]
    assert posts == ["/api/v1/slo", "/api/v1/slo/correction"]

    assert small("plan", "--env", "prod", "--detailed-exitcode") == 0, small.out
    assert "Plan: 0 to create, 0 to update, 0 to delete, 8 unchanged, 0 unmanaged." in small.out


def test_a_moved_window_updates_its_correction_and_a_removed_one_deletes_it(small: Obs, dd: FakeDatadog) -> None:
    assert small("sync", "--env", "prod") == 0, small.err
    (before,) = dd.corrections
    env = small.definitions / "environments" / "prod.yaml"
    text = env.read_text()
    env.write_text(text.replace("BYHOUR=19", "BYHOUR=20"))
    plan = small.plan()
    change = next(c for c in plan["changes"] if c["kind"] == "slo-correction")
    assert change["action"] == "update" and [f["path"] for f in change["fields"]] == ["description", "start"]
    dd.reset_log()
    assert small("sync", "--env", "prod") == 0, small.err
    # Updated in place (the PATCH carries no slo_id, which the API refuses there), an hour later.
    assert list(dd.corrections) == [before]
    assert [r.status for r in dd.log if r.path.startswith("/api/v1/slo/correction/")] == [200]
    assert datetime.fromtimestamp(corrections(dd)[KEY]["start"], UTC).hour == 19
    assert small("plan", "--env", "prod", "--detailed-exitcode") == 0, small.out

    env.write_text(text[: text.index("maintenance:")])
    # The age monitor loses its drain note with the window.
    assert pending(small.plan()) == {
        KEY: "delete",
        "prod/jobs/age/maintenance/nightly": "delete",
        "prod/jobs/age": "update",
    }
    assert small("sync", "--env", "prod") == 0, small.err
    assert dd.corrections == {} and len(dd.slos) == 1
    assert small("plan", "--env", "prod", "--detailed-exitcode") == 0, small.out


def test_a_window_made_one_time_replaces_its_correction(small: Obs, dd: FakeDatadog) -> None:
    assert small("sync", "--env", "prod") == 0, small.err
    (before,) = dd.corrections
    env = small.definitions / "environments" / "prod.yaml"
    once = '{start: "2099-01-10T01:00:00Z", end: "2099-01-10T03:00:00Z"}'
    env.write_text(env.read_text().replace(env.read_text().split("schedule: ")[1].split("\n")[0], once))
    plan = small.plan()
    change = next(c for c in plan["changes"] if c["kind"] == "slo-correction")
    # An update cannot unset the rrule: the correction is deleted and created again.
    assert change["action"] == "update" and "its rrule cannot change in place" in change["note"]
    assert small("sync", "--env", "prod") == 0, small.err
    live = corrections(dd)[KEY]
    assert before not in dd.corrections and live["rrule"] is None and live["timezone"] == "UTC"
    assert live["start"] == int(datetime(2099, 1, 10, 1, 0, tzinfo=UTC).timestamp())
    assert live["end"] == int(datetime(2099, 1, 10, 3, 1, tzinfo=UTC).timestamp())  # plus 1 min of grace
    assert small("plan", "--env", "prod", "--detailed-exitcode") == 0, small.out


def test_a_hand_made_correction_is_never_touched_even_with_a_marker_inside(small: Obs, dd: FakeDatadog) -> None:
    assert small("sync", "--env", "prod") == 0, small.err
    (slo_id,) = dd.slos
    forged = f"Reindex, by hand\n{MARKER}{KEY}\nnot obs's"  # the marker on a line that is not the last
    made = dd.create_correction(
        {"slo_id": slo_id, "category": "Deployment", "description": forged, "start": 1893456000, "end": 1893459600}
    )
    for _ in range(2):
        assert small("sync", "--env", "prod") == 0, small.err
    assert dd.corrections[made["id"]]["attributes"]["description"] == forged
    assert len(dd.corrections) == 2
    assert small("plan", "--env", "prod", "--detailed-exitcode") == 0, small.out


def test_the_fake_refuses_what_the_api_refuses(small: Obs, dd: FakeDatadog) -> None:
    assert small("sync", "--env", "prod") == 0, small.err
    (slo_id,) = dd.slos
    client = Datadog(Endpoint(dd.url, dd.api_key, dd.app_key), attempts=1)
    body = {"slo_id": "0" * 32, "category": "Scheduled Maintenance", "start": 1893456000, "end": 1893459600}
    with pytest.raises(RequestFailed) as unknown:
        client.create(SLO_CORRECTION, body)
    assert unknown.value.status == 404
    recurring = {**body, "slo_id": slo_id, "rrule": "FREQ=DAILY;BYHOUR=1", "duration": 3600}
    with pytest.raises(RequestFailed, match="BYHOUR") as by_hour:
        client.create(SLO_CORRECTION, recurring)
    assert by_hour.value.status == 400
    with pytest.raises(RequestFailed, match="category"):
        client.create(SLO_CORRECTION, {**body, "slo_id": slo_id, "category": "Maintenance"})
    client.close()


def test_lost_answers_to_correction_writes_converge_in_one_run(small: Obs, dd: FakeDatadog) -> None:
    env = small.definitions / "environments" / "prod.yaml"
    text = env.read_text()
    env.write_text(text[: text.index("maintenance:")])
    assert small("sync", "--env", "prod") == 0, small.err
    env.write_text(text)
    dd.faults.lost_response_rate = 1.0  # every write commits and loses its answer
    assert small("sync", "--env", "prod", "--timeout", "2") == 0, small.out + small.err
    dd.faults.lost_response_rate = 0.0
    assert any(r.status == LOST_RESPONSE and r.path == "/api/v1/slo/correction" for r in dd.log)
    assert list(corrections(dd)) == [KEY]
    assert small("plan", "--env", "prod", "--detailed-exitcode") == 0, small.out


def test_a_window_a_correction_cannot_follow_is_a_clear_error(defs: Path) -> None:
    env = defs / "environments" / "prod.yaml"
    env.write_text(env.read_text().replace("FREQ=DAILY;BYHOUR=19", "FREQ=MONTHLY;BYMONTHDAY=1;BYHOUR=19"))
    with pytest.raises(ObsError) as refused:
        expand(load(defs), "prod")
    message = str(refused.value)
    assert "environments/prod.yaml:13: maintenance[0].schedule.rrule" in message
    assert "window 'nightly' holds queues with an SLO, whose correction cannot follow it" in message


def test_diff_says_which_slo_a_window_corrects_and_when(defs: Path, plain_git: None, run: Run) -> None:
    git(defs, "init", "-q")
    commit(defs, "base")
    env = defs / "environments" / "prod.yaml"
    env.write_text(env.read_text().replace("BYHOUR=19", "BYHOUR=21"))
    code, out, err = run(defs, "--base", "HEAD", "--detailed-exitcode")
    assert (code, err) == (2, "")
    assert f"~ slo-correction {KEY}  [prod] maintenance nightly: jobs SLO corrected" in out
    assert "prod: window nightly now corrects the SLO of jobs: daily at 21:00 for 2 h 1 min, Europe/Berlin time" in out
    code, markdown, _ = run(defs, "--base", "HEAD", "--format", "markdown")
    assert "window nightly now corrects the SLO of jobs" in markdown


@pytest.mark.parametrize(
    ("rule", "zone", "expected"),
    [
        ("FREQ=DAILY;BYHOUR=1;BYMINUTE=0", "Europe/Berlin", ("FREQ=DAILY", "2024-01-01T01:00:00+01:00")),
        ("FREQ=WEEKLY;BYDAY=SA;BYHOUR=7;BYMINUTE=30", "UTC", ("FREQ=WEEKLY;BYDAY=SA", "2024-01-06T07:30:00+00:00")),
        (
            "FREQ=WEEKLY;UNTIL=20270101T000000;BYDAY=MO,FR;BYHOUR=22;BYMINUTE=15",
            "America/New_York",
            ("FREQ=WEEKLY;UNTIL=20270101T000000;BYDAY=MO,FR", "2024-01-01T22:15:00-05:00"),
        ),
        ("FREQ=DAILY;UNTIL=20230101T000000;BYHOUR=1;BYMINUTE=0", "UTC", None),  # over before the reference
        ("FREQ=DAILY;INTERVAL=2;BYHOUR=1;BYMINUTE=0", "UTC", "cannot repeat INTERVAL"),
        ("FREQ=DAILY;COUNT=3;BYHOUR=1;BYMINUTE=0", "UTC", "cannot repeat COUNT"),
        ("FREQ=MONTHLY;BYMONTHDAY=1;BYHOUR=1;BYMINUTE=0", "UTC", "only as FREQ=DAILY"),
        ("FREQ=HOURLY;BYHOUR=1", "UTC", "only as FREQ=DAILY"),
        ("FREQ=WEEKLY;BYHOUR=1;BYMINUTE=0", "UTC", "FREQ=WEEKLY with BYDAY"),
        ("FREQ=DAILY", "UTC", "one time of day"),
        ("FREQ=DAILY;BYHOUR=1,13;BYMINUTE=0", "UTC", "one time of day"),
    ],
)
def test_the_time_of_day_moves_into_the_start(rule: str, zone: str, expected: tuple[str, str] | str | None) -> None:
    if isinstance(expected, str):
        with pytest.raises(Unmappable, match=expected):
            recurrence(rule, zone)
        return
    found = recurrence(rule, zone)
    assert (found and (found.rrule, found.first.isoformat())) == expected


def test_a_recurrence_over_before_the_reference_date_gets_no_correction(defs: Path) -> None:
    env = defs / "environments" / "prod.yaml"
    env.write_text(env.read_text().replace("FREQ=DAILY;BYHOUR=19", "FREQ=DAILY;UNTIL=20230101T000000;BYHOUR=19"))
    assert not [r for r in expand(load(defs), "prod") if r.kind == SLO_CORRECTION]


def test_the_plan_undoes_what_the_server_may_rewrite_and_replaces_what_an_update_cannot_change() -> None:
    body = {
        "slo_id": "abc",
        "category": "Scheduled Maintenance",
        "description": f"x\n\n{MARKER}{KEY}",
        "start": 1704132000,
        "duration": 9180,
        "rrule": "FREQ=WEEKLY;BYDAY=MO,TU",
        "timezone": "Europe/Berlin",
    }
    # Numbers as floats, the RRULE's parts in another order, unset fields as null, the server's own fields.
    answered = {
        **body,
        "start": 1704132000.0,
        "rrule": "BYDAY=MO,TU;FREQ=WEEKLY",
        "end": None,
        "slo_query": None,
        "created_at": 1,
        "creator": {"email": "x"},
        "modifier": None,
    }
    assert diff(SLO_CORRECTION, body, answered) == ()
    one_time = {k: v for k, v in body.items() if k not in ("duration", "rrule")} | {"end": 1704140000}
    live = Live(SLO_CORRECTION, "c1", KEY, answered, "1")
    desired = Resource(SLO_CORRECTION, KEY, one_time, "prod", "jobs")
    (change,) = make_plan("prod", [desired], [live]).changes
    assert change.action == "update" and change.replace and "its rrule cannot change in place" in change.note
    assert {f.path for f in change.fields} == {"end", "rrule"}


def test_the_fakes_update_refuses_what_the_update_model_lacks() -> None:
    """SLOCorrectionUpdateRequest has no slo_id and its data no id: a client that sent them would be refused."""
    store = Corrections(lambda slo_id: slo_id == "a")
    attributes = {"slo_id": "a", "category": "Other", "start": 100, "end": 200}
    made = store.create({"data": {"type": "correction", "attributes": attributes}})["data"]
    for data in ({"attributes": {"slo_id": "a", "start": 100}}, {"id": made["id"], "attributes": {"start": 100}}):
        with pytest.raises(Rejected, match="unknown key"):
            store.update(made["id"], {"data": {"type": "correction", **data}})
    moved = store.update(made["id"], {"data": {"type": "correction", "attributes": {"start": 150}}})
    assert moved["data"]["attributes"]["start"] == 150 and moved["data"]["attributes"]["slo_id"] == "a"
    store.delete_for_slo("a")  # an SLO's deletion takes its corrections along
    assert store.items == {}
