"""The shipped example works as a user runs it: it validates, renders, plans and syncs in every environment, and
links every queue. Its counts and names are read from the definitions, never pinned: a legitimate edit of the
example (a queue or metric added, a threshold raised, a metric renamed) keeps these green. OBS_EXAMPLE names
the example's folder (the repository root by default); tests/test_example_edits.py runs them on edited copies."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sync.cli.app import main
from sync.definitions.load import load
from sync.expand.desired import expand

from .conftest import EXAMPLE, Obs, desired
from .fakedd import FakeDatadog

pytestmark = pytest.mark.example

ENVS = sorted(e.name for e in load(EXAMPLE).environments)


def test_the_example_validates(capsys: pytest.CaptureFixture[str]) -> None:
    defs = load(EXAMPLE)
    assert main(["--definitions", str(EXAMPLE), "validate"]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"ok: {len(defs.queues)} queues, {len(defs.metrics)} metrics, "), out
    assert f"{len(defs.environments)} environments" in out


@pytest.mark.parametrize("env", ENVS)
def test_every_environment_renders_and_plans_what_the_definitions_say(
    env: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["--definitions", str(EXAMPLE), "render", "--env", env, "--out", str(tmp_path)]) == 0
    written = [json.loads(p.read_text()) for p in tmp_path.rglob("*.json")]
    assert len(written) == desired(EXAMPLE, env) > 0
    capsys.readouterr()
    assert main(["--definitions", str(EXAMPLE), "plan", "--env", env, "--offline", "--format", "json"]) == 0
    plan = json.loads(capsys.readouterr().out)
    assert plan["summary"]["create"] == desired(EXAMPLE, env)
    assert {c["action"] for c in plan["changes"]} == {"create"}


@pytest.mark.parametrize("env", ENVS)
def test_every_queue_has_links(env: str, capsys: pytest.CaptureFixture[str]) -> None:
    rendered = expand(load(EXAMPLE), env)
    assert main(["--definitions", str(EXAMPLE), "links", "--env", env, "--offline", "--format", "json"]) == 0
    queues = json.loads(capsys.readouterr().out)["queues"]
    assert {q["queue"] for q in queues} == {r.queue for r in rendered if r.queue}
    keys = {r.key for r in rendered}
    for queue in queues:
        assert queue["links"] and queue["monitors"], queue["queue"]
        assert {m["key"] for m in queue["monitors"]} <= keys, queue["queue"]


def test_a_sync_of_prod_leaves_nothing_to_change(dd: FakeDatadog, capsys: pytest.CaptureFixture[str]) -> None:
    obs = Obs(EXAMPLE, capsys)
    assert obs("sync", "--env", "prod", "--yes") == 0, obs.err
    plan = obs.plan("prod")
    assert plan["summary"]["create"] == plan["summary"]["update"] == plan["summary"]["delete"] == 0
    assert plan["summary"]["unchanged"] == desired(EXAMPLE, "prod")
