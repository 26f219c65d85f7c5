"""Approving a computed plan: `obs plan --out FILE` writes it, `obs sync --plan FILE` applies exactly that
plan or refuses; and a sync on a terminal asks before it writes. Against the fake Datadog."""

from __future__ import annotations

import copy
import json
import os
import pty
import subprocess
import sys
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from .conftest import ROOT, Obs, commit, desired, git
from .fakedd import FakeDatadog


def raise_prod_age(definitions: Path) -> None:
    path = definitions / "environments" / "prod.yaml"
    path.write_text(path.read_text().replace("critical: 21600, warning: 10800", "critical: 25200, warning: 10800"))


def test_a_sync_applies_exactly_the_approved_plan(obs: Obs, dd: FakeDatadog, tmp_path: Path) -> None:
    saved = tmp_path / "prod.plan.json"
    assert obs("plan", "--env", "prod", "--out", str(saved)) == 0, obs.err
    doc = json.loads(saved.read_text())
    assert doc["format"] == "obs-plan/2" and doc["env"] == "prod"
    assert (doc["host"], doc["org"], doc["commit"], doc["dirty"]) == (dd.url, dd.org_id, None, False)
    assert len(doc["changes"]) == desired(obs.definitions, "prod") and {c["action"] for c in doc["changes"]} == {
        "create"
    }
    assert all(c["body"] for c in doc["changes"]), "the file holds what will be written"

    assert obs("sync", "--env", "prod", "--plan", str(saved)) == 0, obs.err
    assert f"Applied: {desired(obs.definitions, 'prod')} created, 0 updated, 0 deleted, 0 failed" in obs.out
    assert len(dd.monitors) == desired(obs.definitions, "prod", kinds=("monitor", "composite"))


def test_a_live_change_that_matters_refuses_the_approved_plan(obs: Obs, dd: FakeDatadog, tmp_path: Path) -> None:
    assert obs("sync", "--env", "prod") == 0, obs.err
    raise_prod_age(obs.definitions)
    saved = tmp_path / "prod.plan.json"
    assert obs("plan", "--env", "prod", "--out", str(saved)) == 0, obs.err
    assert [c["key"] for c in json.loads(saved.read_text())["changes"]] == ["prod/reindexing/age"]

    # Someone edits the monitor in the UI after approval: the approved field change is no longer what happens.
    monitor = next(m for m in dd.monitors.values() if "obs-key:prod/reindexing/age" in m["tags"])
    monitor["options"]["thresholds"]["critical"] = 30000.0
    before = json.dumps(dd.monitors, sort_keys=True)
    assert obs("sync", "--env", "prod", "--plan", str(saved)) == 1
    assert obs.err.startswith("error: the live org or the definitions changed since ")
    assert "update monitor prod/reindexing/age now differs in options.thresholds.critical" in obs.err
    assert "nothing was written" in obs.err
    assert json.dumps(dd.monitors, sort_keys=True) == before


def test_a_live_change_obs_does_not_own_does_not_block_the_plan(obs: Obs, dd: FakeDatadog, tmp_path: Path) -> None:
    assert obs("sync", "--env", "prod") == 0, obs.err
    raise_prod_age(obs.definitions)
    saved = tmp_path / "prod.plan.json"
    assert obs("plan", "--env", "prod", "--out", str(saved)) == 0, obs.err
    for monitor in dd.monitors.values():
        monitor["overall_state"] = "Alert"  # the server's, never obs's
    assert obs("sync", "--env", "prod", "--plan", str(saved)) == 0, obs.err
    assert "Applied: 0 created, 1 updated, 0 deleted, 0 failed" in obs.out


def test_an_already_applied_plan_is_refused_not_applied_twice(obs: Obs, dd: FakeDatadog, tmp_path: Path) -> None:
    saved = tmp_path / "prod.plan.json"
    assert obs("plan", "--env", "prod", "--out", str(saved)) == 0, obs.err
    assert obs("sync", "--env", "prod") == 0, obs.err
    assert obs("sync", "--env", "prod", "--plan", str(saved)) == 1
    assert "create composite prod/critical/backlog_draining is no longer needed" in obs.err
    assert f"and {desired(obs.definitions, 'prod') - 5} more" in obs.err


def test_a_plan_file_that_is_not_one_is_a_clear_error(obs: Obs, dd: FakeDatadog, tmp_path: Path) -> None:
    bad = tmp_path / "plan.json"
    bad.write_text("{}")
    assert obs("sync", "--env", "prod", "--plan", str(bad)) == 1
    assert (
        obs.err
        == f"error: {bad} is not a plan file of this obs (obs-plan/2): write it again with obs plan --out FILE\n"
    )
    assert obs("sync", "--env", "prod", "--plan", str(tmp_path / "missing.json")) == 1
    assert "cannot read the plan file" in obs.err and "Traceback" not in obs.err
    assert obs("plan", "--env", "staging", "--out", str(bad)) == 0
    assert obs("sync", "--env", "prod", "--plan", str(bad)) == 1
    assert "the plan file is for 'staging', not 'prod'" in obs.err
    assert dd.monitors == {}


def sync_on_a_terminal(definitions: Path, answer: str) -> tuple[int, str]:
    """`obs sync` in a child process whose standard input and output are a terminal."""
    main, child = pty.openpty()
    environ = {**os.environ, "PYTHONPATH": str(ROOT)}
    command = [sys.executable, "-m", "sync.cli", "--definitions", str(definitions), "sync", "--env", "prod"]
    process = subprocess.Popen(command, stdin=child, stdout=child, stderr=child, env=environ, cwd=ROOT)
    os.close(child)
    output = b""
    while b"Only 'yes' applies: " not in output:
        chunk = os.read(main, 65536)
        assert chunk, output.decode()
        output += chunk
    os.write(main, answer.encode() + b"\n")
    while True:
        try:
            chunk = os.read(main, 65536)
        except OSError:  # the child closed the terminal
            break
        if not chunk:
            break
        output += chunk
    os.close(main)
    return process.wait(timeout=120), output.decode()


def test_a_sync_on_a_terminal_asks_after_printing_the_plan(obs: Obs, dd: FakeDatadog) -> None:
    code, out = sync_on_a_terminal(obs.definitions, "no")
    assert code == 1
    n = desired(obs.definitions, "prod")
    assert out.index(f"Plan: {n} to create") < out.index(f"Apply these {n} changes to prod? Only 'yes' applies: ")
    assert "error: sync cancelled: nothing was written: answer yes to apply, or pass --yes" in out
    assert dd.monitors == {}

    code, out = sync_on_a_terminal(obs.definitions, "yes")
    assert code == 0, out
    assert f"Applied: {n} created" in out
    assert len(dd.monitors) == desired(obs.definitions, "prod", kinds=("monitor", "composite"))

    raise_prod_age(obs.definitions)
    assert obs("sync", "--env", "prod", "--yes") == 0, "off a terminal (CI) it never asks"
    assert "Applied: 0 created, 1 updated" in obs.out


def test_obs_plan_shows_message_changes_as_lines_and_who_gets_paged(obs: Obs, dd: FakeDatadog) -> None:
    assert obs("sync", "--env", "prod") == 0, obs.err
    path = obs.definitions / "environments" / "prod.yaml"
    path.write_text(path.read_text().replace('page: ["@pagerduty-jobs-platform"]', 'page: ["@opsgenie-jobs"]'))
    assert obs("plan", "--env", "prod") == 0, obs.err
    assert "    message: text changed, +2 -2 lines\n" in obs.out
    assert "      -{{#is_alert}}@pagerduty-jobs-platform{{/is_alert}}\n" in obs.out
    assert "      +{{#is_alert}}@opsgenie-jobs{{/is_alert}}\n" in obs.out
    paging = obs.out.split("Who gets paged:\n")[1].split("Plan:")[0]
    assert paging.splitlines() == [
        "  alert: +@opsgenie-jobs on 49 monitors, -@pagerduty-jobs-platform on 49 monitors",
        # workers_capped pages on the age warning too: the cap is the problem, not the age.
        "  warning: +@opsgenie-jobs on 5 monitors, -@pagerduty-jobs-platform on 5 monitors",
        "  recovery: +@opsgenie-jobs on 49 monitors, -@pagerduty-jobs-platform on 49 monitors",
        "  warning_recovery: +@opsgenie-jobs on 5 monitors, -@pagerduty-jobs-platform on 5 monitors",
    ]
    assert obs("plan", "--env", "prod", "--format", "markdown") == 0
    assert "**Who gets paged**" in obs.out and "````diff" not in obs.out and "```diff" in obs.out
    assert "@opsgenie-jobs on 49" not in obs.out, "markdown mentions nobody"


def ui_clone(dd: FakeDatadog, original: dict[str, Any]) -> dict[str, Any]:
    """ "Clone dashboard" in the Datadog UI keeps the description, and with it obs's marker line."""
    body: dict[str, Any] = {
        k: copy.deepcopy(original[k]) for k in ("title", "description", "layout_type", "widgets") if k in original
    }
    body["title"] += " (copy)"
    return dd.create_dashboard(body)


def test_a_second_copy_of_an_approved_deletion_refuses_the_plan(obs: Obs, dd: FakeDatadog, tmp_path: Path) -> None:
    assert obs("sync", "--env", "prod") == 0, obs.err
    original = next(d for d in dd.dashboards.values() if "obs-key:prod/" in (d.get("description") or ""))
    first = ui_clone(dd, original)
    saved = tmp_path / "prod.plan.json"
    assert obs("plan", "--env", "prod", "--out", str(saved)) == 0, obs.err
    approved = [(c["action"], c["id"]) for c in json.loads(saved.read_text())["changes"]]
    assert approved == [("delete", first["id"])]
    # Another copy appears after approval, with an ID sorting before the approved one (IDs are random).
    while (second := ui_clone(dd, original))["id"] > first["id"]:
        dd.delete_dashboard(second["id"])
    before = set(dd.dashboards)
    assert obs("sync", "--env", "prod", "--plan", str(saved)) == 1
    assert f"delete dashboard prod/oncall (id {second['id']}) is new" in obs.err
    assert "nothing was written" in obs.err
    assert set(dd.dashboards) == before


def test_an_approved_deletion_of_a_copy_edited_since_refuses_the_plan(
    obs: Obs, dd: FakeDatadog, tmp_path: Path
) -> None:
    """The approval names what the deleted object held: someone who edits the copy after the approval (it
    turns out to be a team's working dashboard) stops the deletion; nothing else about it changed."""
    assert obs("sync", "--env", "prod") == 0, obs.err
    original = next(d for d in dd.dashboards.values() if "obs-key:prod/" in (d.get("description") or ""))
    copy_ = ui_clone(dd, original)
    saved = tmp_path / "prod.plan.json"
    assert obs("plan", "--env", "prod", "--out", str(saved)) == 0, obs.err
    (change,) = json.loads(saved.read_text())["changes"]
    assert change["removes"]["title"] == copy_["title"]
    dd.update_dashboard(copy_["id"], {**copy_, "title": copy_["title"] + " - payments team"})
    assert obs("sync", "--env", "prod", "--plan", str(saved)) == 1
    assert "delete dashboard prod/oncall now differs in removes.title" in obs.err, obs.err
    assert copy_["id"] in dd.dashboards


def test_a_monitor_changing_state_does_not_stale_an_approved_deletion(
    obs: Obs, dd: FakeDatadog, tmp_path: Path
) -> None:
    """A deletion is approved by what obs writes, not by what the server moves on its own."""
    assert obs("sync", "--env", "prod") == 0, obs.err
    monitor_id, doomed = next((i, m) for i, m in dd.monitors.items() if "obs-key:prod/high/age" in m["tags"])
    # Orphan it: the monitor stays live with our marker, but under a key no definition produces.
    gone = [t.replace("obs-key:prod/high/age", "obs-key:prod/high/gone") for t in doomed["tags"]]
    dd.update_monitor(monitor_id, {"tags": gone})
    saved = tmp_path / "prod.plan.json"
    assert obs("plan", "--env", "prod", "--out", str(saved)) == 0, obs.err
    doc = json.loads(saved.read_text())
    planned = [(c["action"], c["key"]) for c in doc["changes"]]
    assert ("create", "prod/high/age") in planned and ("delete", "prod/high/gone") in planned
    dd.set_monitor_state(monitor_id, "Alert")
    assert obs("sync", "--env", "prod", "--plan", str(saved)) == 0, obs.err
    assert monitor_id not in dd.monitors


def approved_update(obs: Obs, tmp_path: Path) -> Path:
    """A plan file of one monitor update, for an org obs synced before."""
    assert obs("sync", "--env", "prod") == 0, obs.err
    raise_prod_age(obs.definitions)
    saved = tmp_path / "prod.plan.json"
    assert obs("plan", "--env", "prod", "--out", str(saved)) == 0, obs.err
    return saved


def edit(saved: Path, **fields: Any) -> None:
    doc = json.loads(saved.read_text())
    saved.write_text(json.dumps({**doc, **fields}))


def refused(obs: Obs, dd: FakeDatadog, saved: Path, *args: str) -> str:
    before = json.dumps(dd.monitors, sort_keys=True)
    assert obs("sync", "--env", "prod", "--plan", str(saved), *args) == 1
    assert json.dumps(dd.monitors, sort_keys=True) == before, "nothing was written"
    assert "Traceback" not in obs.err and "internal error" not in obs.err
    return obs.err


def test_a_plan_file_made_with_another_orgs_key_is_refused(obs: Obs, dd: FakeDatadog, tmp_path: Path) -> None:
    saved = approved_update(obs, tmp_path)
    planned_for, dd.org_id = dd.org_id, str(uuid.uuid4())  # the same host answers for a key of another org
    err = refused(obs, dd, saved)
    assert f"the plan file was made for the org {planned_for}, but DD_API_KEY is {dd.org_id}'s" in err
    assert dd.calls("GET", "/api/v2/validate") == 2 and dd.calls("PUT") == 0


def test_where_the_keys_org_cannot_be_read_the_plan_says_so_and_stays_bound_to_that(
    obs: Obs, dd: FakeDatadog, tmp_path: Path
) -> None:
    dd.identifies_keys = False  # a site that does not offer GET /api/v2/validate (in preview)
    saved = approved_update(obs, tmp_path)
    assert json.loads(saved.read_text())["org"] is None
    dd.identifies_keys = True
    assert f"made for the org obs could not identify, but DD_API_KEY is {dd.org_id}'s" in refused(obs, dd, saved)
    dd.identifies_keys = False
    assert obs("sync", "--env", "prod", "--plan", str(saved)) == 0, obs.err
    assert "Applied: 0 created, 1 updated" in obs.out


def test_a_plan_file_made_against_another_host_is_refused(obs: Obs, dd: FakeDatadog, tmp_path: Path) -> None:
    saved = approved_update(obs, tmp_path)
    edit(saved, host="https://api.datadoghq.eu")
    assert f"the plan file was made against https://api.datadoghq.eu, not {dd.url}" in refused(obs, dd, saved)


def test_a_plan_file_expires(obs: Obs, dd: FakeDatadog, tmp_path: Path) -> None:
    saved = approved_update(obs, tmp_path)
    made = datetime.fromisoformat(json.loads(saved.read_text())["created_at"])
    assert abs(made - datetime.now(UTC)) < timedelta(minutes=1)
    edit(saved, created_at=(made - timedelta(hours=25)).isoformat())
    assert "the plan file was made 25.0 h ago" in refused(obs, dd, saved)
    assert "more than --max-age (24.0 h) allows" in obs.err
    edit(saved, created_at=(made + timedelta(hours=1)).isoformat())
    assert "the plan file was made in the future" in refused(obs, dd, saved, "--max-age", "2d")
    edit(saved, created_at=(made - timedelta(hours=25)).isoformat())
    assert obs("sync", "--env", "prod", "--plan", str(saved), "--max-age", "2d") == 0, obs.err
    assert "Applied: 0 created, 1 updated" in obs.out


def test_a_plan_file_is_bound_to_the_definitions_commit(obs: Obs, dd: FakeDatadog, repo: Path, tmp_path: Path) -> None:
    assert obs("sync", "--env", "prod") == 0, obs.err
    raise_prod_age(repo)
    commit(repo, "raise the age threshold")
    saved = tmp_path / "prod.plan.json"
    assert obs("plan", "--env", "prod", "--out", str(saved)) == 0, obs.err
    head = git(repo, "rev-parse", "HEAD").strip()
    assert (json.loads(saved.read_text())["commit"], json.loads(saved.read_text())["dirty"]) == (head, False)

    path = repo / "environments" / "prod.yaml"
    path.write_text(path.read_text() + "# a comment changes no monitor\n")
    err = refused(obs, dd, saved)
    assert f"made from the definitions at commit {head[:12]}, and they are now at commit {head[:12]} with " in err
    commit(repo, "a comment")
    assert f"and they are now at commit {git(repo, 'rev-parse', 'HEAD')[:12]}" in refused(obs, dd, saved)


@pytest.mark.parametrize(
    ("change", "said"),
    [
        (1, "changes[0]: 1 is not of type 'object'"),
        ({"action": "create"}, "changes[0]: 'kind' is a required property"),
        (
            {"action": "launch", "kind": "monitor", "key": "k", "id": None, "fields": [], "body": None, "digest": ""},
            "changes[0].action: 'launch' is not one of ['create', 'update', 'delete']",
        ),
    ],
)
def test_a_malformed_plan_file_is_a_clear_error(
    obs: Obs, dd: FakeDatadog, tmp_path: Path, change: Any, said: str
) -> None:
    saved = approved_update(obs, tmp_path)
    edit(saved, changes=[change])
    assert f"error: {saved} is not a valid plan file: {said}: write it again" in refused(obs, dd, saved)


def test_a_plan_file_edited_after_planning_is_refused(obs: Obs, dd: FakeDatadog, tmp_path: Path) -> None:
    saved = approved_update(obs, tmp_path)
    doc = json.loads(saved.read_text())
    doc["changes"][0]["body"]["message"] = "edited"
    saved.write_text(json.dumps(doc))
    assert f"{saved}: changes[0] was edited after it was planned (its digest differs)" in refused(obs, dd, saved)
    for extra in ({"format": "obs-plan/1"}, {"created_at": "yesterday"}, {"surprise": True}):
        edit(saved, **extra)
        assert "plan file" in refused(obs, dd, saved), extra


def test_an_offline_plan_cannot_be_saved_for_approval(obs: Obs, tmp_path: Path) -> None:
    assert obs("plan", "--env", "prod", "--offline", "--out", str(tmp_path / "plan.json")) == 1
    assert "--out needs the live org" in obs.err and not (tmp_path / "plan.json").exists()
