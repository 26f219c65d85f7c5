"""On-call links end to end: monitor messages carry the live dashboard ID after a sync, follow a recreated
dashboard, and `obs links` prints every link with IDs from the org (the fake Datadog on 127.0.0.1)."""

from __future__ import annotations

import json
import os
import re
from contextlib import closing
from dataclasses import replace
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

from sync.core.kinds import DASHBOARD, MONITOR
from sync.core.plan import make_plan
from sync.datadog import apply, reads
from sync.datadog.client import Datadog
from sync.datadog.credentials import endpoint
from sync.definitions.load import load
from sync.expand.desired import expand

from .conftest import Obs, desired
from .fakedd import FakeDatadog
from .test_links import SITES

DASHBOARD_LINK = re.compile(r"^Dashboard: (\S+)$", re.M)


def dashboard_links(dd: FakeDatadog) -> dict[str, tuple[str, dict[str, list[str]]]]:
    """Each monitor's name -> the dashboard ID its message links to, and the preset template variables."""
    found = {}
    for monitor in dd.monitors.values():
        match = DASHBOARD_LINK.search(monitor["message"])
        assert match is not None, monitor["name"]
        parts = urlsplit(match.group(1))
        assert parts.netloc == "app.datadoghq.com", match.group(1)
        found[monitor["name"]] = (parts.path.removeprefix("/dashboard/"), parse_qs(parts.query))
    return found


def only_dashboard(dd: FakeDatadog) -> tuple[str, dict[str, Any]]:
    ((dashboard_id, body),) = dd.dashboards.items()
    return dashboard_id, body


def pending(plan: dict[str, Any]) -> list[dict[str, Any]]:
    return [c for c in plan["changes"] if c["action"] != "unchanged"]


def alerting(obs: Obs) -> int:
    """How many monitors and composites prod has: each message links the dashboard."""
    return desired(obs.definitions, "prod", kinds=("monitor", "composite"))


def test_after_a_sync_every_message_links_the_live_dashboard_with_its_queue(obs: Obs, dd: FakeDatadog) -> None:
    assert obs("sync", "--env", "prod") == 0, obs.err
    dashboard_id, _ = only_dashboard(dd)
    links = dashboard_links(dd)
    assert len(links) == alerting(obs)  # SLO burn-rate monitors too
    for name, (linked, variables) in links.items():
        queue = name.split("] ")[1].split(":")[0]
        assert linked == dashboard_id, name
        assert variables["tpl_var_queue"] == [f"prod-{queue}"], name
    assert not any("${dashboard_id" in m["message"] for m in dd.monitors.values())
    assert obs.plan()["summary"]["update"] == 0


def test_a_dashboard_recreated_with_a_new_id_reaches_the_messages_on_the_next_sync(obs: Obs, dd: FakeDatadog) -> None:
    obs("sync", "--env", "prod")
    old_id, body = only_dashboard(dd)
    dd.delete_dashboard(old_id)  # someone deletes it and restores a copy: same content, new ID
    new_id = str(dd.create_dashboard({k: v for k, v in body.items() if k not in ("id", "url", "created_at")})["id"])
    assert new_id != old_id

    plan = obs.plan()
    changed = pending(plan)
    assert len(changed) == alerting(obs) and {c["kind"] for c in changed} == {"monitor", "composite"}
    for change in changed:
        assert [f["path"] for f in change["fields"]] == ["message"], change["key"]
        field = change["fields"][0]
        assert field["new"] == field["old"].replace(f"/dashboard/{old_id}?", f"/dashboard/{new_id}?")
    assert obs("plan", "--env", "prod") == 0 and "${dashboard_id" not in obs.out  # the ID is known: no placeholder

    assert obs("sync", "--env", "prod") == 0, obs.err
    assert f"Applied: 0 created, {alerting(obs)} updated, 0 deleted, 0 failed" in obs.out
    assert {linked for linked, _ in dashboard_links(dd).values()} == {new_id}
    assert pending(obs.plan()) == []


def test_a_deleted_dashboard_is_created_first_and_the_messages_get_its_id(obs: Obs, dd: FakeDatadog) -> None:
    obs("sync", "--env", "prod")
    old_id, _ = only_dashboard(dd)
    dd.delete_dashboard(old_id)

    assert obs("plan", "--env", "prod") == 0
    assert "+ dashboard prod/oncall" in obs.out and f"Plan: 1 to create, {alerting(obs)} to update" in obs.out
    assert "${dashboard_id:prod/oncall}" in obs.out and "Note: Monitor messages link to dashboards by ID" in obs.out

    assert obs("sync", "--env", "prod") == 0, obs.err
    new_id, _ = only_dashboard(dd)
    assert {linked for linked, _ in dashboard_links(dd).values()} == {new_id}
    assert pending(obs.plan()) == []


def test_a_replaced_dashboard_hands_its_new_id_to_the_messages(obs: Obs, dd: FakeDatadog) -> None:
    obs("sync", "--env", "prod")
    old_id, _ = only_dashboard(dd)
    board = obs.definitions / "dashboards" / "oncall.yaml"
    text = board.read_text().replace("layout_type: ordered\nreflow_type: auto\n", "layout_type: free\n")
    # A free layout needs a position on every widget.
    board.write_text(text.replace("  - definition:", "  - layout: {x: 0, y: 0, width: 4, height: 2}\n    definition:"))
    assert obs("sync", "--env", "prod") == 0, obs.err
    new_id, body = only_dashboard(dd)
    assert new_id != old_id and body["layout_type"] == "free"
    assert {linked for linked, _ in dashboard_links(dd).values()} == {new_id}
    assert pending(obs.plan()) == []


@pytest.mark.parametrize("site", SITES)
def test_obs_links_uses_the_app_host_of_every_site_and_the_live_ids(
    site: str, obs: Obs, dd: FakeDatadog, tmp_path: Path
) -> None:
    obs("sync", "--env", "prod")
    dashboard_id, _ = only_dashboard(dd)
    ids = {m["name"]: str(i) for i, m in dd.monitors.items()}
    prod = obs.definitions / "environments" / "prod.yaml"
    prod.write_text(prod.read_text().replace("site: datadoghq.com", f"site: {site}"))

    assert obs("links", "--env", "prod", "--format", "json") == 0, obs.err
    sheet = json.loads(obs.out)
    app = SITES[site]
    assert sheet["app"] == app
    assert [d["url"] for d in sheet["dashboards"]] == [f"{app}/dashboard/{dashboard_id}"]
    assert len(sheet["queues"]) == 6
    for queue in sheet["queues"]:
        found = {link["label"]: link["url"] for link in queue["links"]}
        assert found["Dashboard"].startswith(f"{app}/dashboard/{dashboard_id}?tpl_var_queue=prod-{queue['queue']}")
        assert found["Its monitors"].startswith(f"{app}/monitors/manage?q=")
        assert found["SQS queue"].startswith("https://us-east-1.console.aws.amazon.com/sqs/v3/home?region=us-east-1#")
        for monitor in queue["monitors"]:
            assert monitor["url"] == f"{app}/monitors/{ids[monitor['title']]}", monitor


def test_obs_links_for_one_queue_in_text_and_markdown(obs: Obs, dd: FakeDatadog) -> None:
    obs("sync", "--env", "prod")
    assert obs("links", "--env", "prod", "--queue", "critical") == 0, obs.err
    assert "critical (short, owned by platform):" in obs.out and "\nhigh (" not in obs.out
    assert re.search(r"\[prod\] critical: worker CPU high +https://app\.datadoghq\.com/monitors/\d+$", obs.out, re.M)
    assert "obs trace --env prod --topic prod-jobs-critical --since 2h --peek-dlq" in obs.out
    assert "not in Datadog yet" not in obs.out

    assert obs("links", "--env", "prod", "--queue", "critical", "--format", "markdown") == 0
    assert "### `critical` (short, owned by platform)" in obs.out
    assert re.search(
        r"^  - \[\\\[prod\\\] critical: worker CPU high\]\(https://app\.datadoghq\.com/monitors/\d+\)$", obs.out, re.M
    )


def test_obs_links_says_what_is_not_synced_yet(obs: Obs, dd: FakeDatadog) -> None:
    assert obs("links", "--env", "staging", "--queue", "low") == 0, obs.err
    assert "not in Datadog yet (obs sync creates it)" in obs.out
    assert "/dashboard/${dashboard_id:staging/oncall}?" in obs.out


def test_obs_links_offline_needs_no_credentials(obs: Obs, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("DD_API_KEY", raising=False)
    monkeypatch.delenv("DD_APP_KEY", raising=False)
    assert obs("links", "--env", "prod") == 1
    assert "DD_API_KEY and DD_APP_KEY are not set" in obs.err and "--offline" in obs.err
    assert obs("links", "--env", "prod", "--offline", "--format", "json") == 0, obs.err
    sheet = json.loads(obs.out)
    assert all(m["id"] is None for q in sheet["queues"] for m in q["monitors"])


def test_obs_links_refuses_an_unknown_queue_before_reading_the_org(obs: Obs, dd: FakeDatadog) -> None:
    assert obs("links", "--env", "prod", "--queue", "critcal") == 1
    assert obs.err.startswith("error: no queue 'critcal' in prod: did you mean critical? use one of: critical, ")
    assert dd.calls() == 0


def test_obs_links_finds_a_queue_by_the_aws_name_an_alert_shows(obs: Obs) -> None:
    assert obs("links", "--env", "prod", "--queue", "prod-critical", "--offline", "--format", "json") == 0, obs.err
    assert [q["queue"] for q in json.loads(obs.out)["queues"]] == ["critical"]
    assert obs("links", "--env", "prod", "--queue", "prod-critical-dlq", "--offline", "--format", "json") == 0
    assert [q["queue"] for q in json.loads(obs.out)["queues"]] == ["critical"]
    assert obs("links", "--env", "prod", "--queue", "prod-critcal", "--offline") == 1
    assert "did you mean prod-critical? use one of: " in obs.err


def test_when_the_dashboard_write_fails_monitors_go_out_without_that_link(obs: Obs, dd: FakeDatadog) -> None:
    """Alerting matters more than a link: the monitors are written, never with a placeholder, and the next
    sync adds the link once the dashboard exists."""
    desired = [
        replace(r, body={**r.body, "frobnicate": 1}) if r.kind == DASHBOARD else r  # a body the API refuses
        for r in expand(load(obs.definitions), "prod")
    ]
    with closing(Datadog(endpoint(os.environ, "datadoghq.com", "prod"))) as client:
        outcomes = apply.apply(make_plan("prod", desired, ()), client)
    failed = [o for o in outcomes if not o.ok]
    assert [o.change.key for o in failed] == ["prod/oncall"] and "frobnicate" in failed[0].error
    notes = {o.note for o in outcomes if o.ok and o.change.kind == MONITOR}
    assert notes == {"sent without its link to dashboard prod/oncall, which has no ID yet"}
    assert len(dd.monitors) == alerting(obs) and not dd.dashboards
    assert not any("Dashboard:" in m["message"] or "${" in m["message"] for m in dd.monitors.values())

    assert obs("sync", "--env", "prod") == 0, obs.err
    assert f"Applied: 1 created, {alerting(obs)} updated, 0 deleted, 0 failed" in obs.out
    dashboard_id, _ = only_dashboard(dd)
    assert {linked for linked, _ in dashboard_links(dd).values()} == {dashboard_id}


def test_a_failed_dashboard_replacement_leaves_the_links_to_the_one_still_there(obs: Obs, dd: FakeDatadog) -> None:
    obs("sync", "--env", "prod")
    old_id, _ = only_dashboard(dd)
    before = {i: m["message"] for i, m in dd.monitors.items()}
    desired = [
        replace(r, body={**r.body, "layout_type": "free", "frobnicate": 1}) if r.kind == DASHBOARD else r
        for r in expand(load(obs.definitions), "prod")
    ]
    with closing(Datadog(endpoint(os.environ, "datadoghq.com", "prod"))) as client:
        plan = reads.plan(client, "prod", desired)
        outcomes = apply.apply(plan, client)
    (failed,) = [o for o in outcomes if not o.ok]
    assert failed.change.key == "prod/oncall" and failed.change.replace
    assert all(o.note == "" for o in outcomes if o.ok)  # no message went out without its link
    assert only_dashboard(dd)[0] == old_id
    assert {i: m["message"] for i, m in dd.monitors.items()} == before
