"""Approving a computed plan: `obs plan --out FILE` writes it, `obs sync --plan FILE` applies exactly that
plan or refuses; and a sync on a terminal asks before it writes. Against the fake Datadog."""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys
from pathlib import Path

from .conftest import ROOT, Obs
from .fakedd import FakeDatadog


def raise_prod_age(definitions: Path) -> None:
    path = definitions / "environments" / "prod.yaml"
    path.write_text(path.read_text().replace("critical: 21600, warning: 10800", "critical: 25200, warning: 10800"))


def test_a_sync_applies_exactly_the_approved_plan(obs: Obs, dd: FakeDatadog, tmp_path: Path) -> None:
    saved = tmp_path / "prod.plan.json"
    assert obs("plan", "--env", "prod", "--out", str(saved)) == 0, obs.err
    doc = json.loads(saved.read_text())
    assert doc["format"] == "obs-plan/1" and doc["env"] == "prod"
    assert len(doc["changes"]) == 145 and {c["action"] for c in doc["changes"]} == {"create"}
    assert all(c["body"] for c in doc["changes"]), "the file holds what will be written"

    assert obs("sync", "--env", "prod", "--plan", str(saved)) == 0, obs.err
    assert "Applied: 145 created, 0 updated, 0 deleted, 0 failed" in obs.out
    assert len(dd.monitors) == 120  # monitors and composites


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
    assert "and 140 more" in obs.err


def test_a_plan_file_that_is_not_one_is_a_clear_error(obs: Obs, dd: FakeDatadog, tmp_path: Path) -> None:
    bad = tmp_path / "plan.json"
    bad.write_text("{}")
    assert obs("sync", "--env", "prod", "--plan", str(bad)) == 1
    assert obs.err == f"error: {bad} is not a plan file of this obs (obs-plan/1): write it again with obs plan --out\n"
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
    assert out.index("Plan: 145 to create") < out.index("Apply these 145 changes to prod? Only 'yes' applies: ")
    assert "error: sync cancelled: nothing was written: answer yes to apply, or pass --yes" in out
    assert dd.monitors == {}

    code, out = sync_on_a_terminal(obs.definitions, "yes")
    assert code == 0, out
    assert "Applied: 145 created" in out and len(dd.monitors) == 120

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
