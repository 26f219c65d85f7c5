"""Golden files: the exact API bodies and plan report of a small fixture (tests/fixtures/small: two queues, a
composite, an SLO, maintenance windows, three environments), not of the shipped example, so that an edit of the
example churns none. Regenerate with `pytest --update-golden` and review the diff."""

from __future__ import annotations

from pathlib import Path

import pytest

from sync.cli.app import main
from tests.conftest import GOLDEN, SMALL, Golden

ENVS = ("dev", "prod", "staging")


@pytest.mark.parametrize("env", ENVS)
def test_rendered_payloads(
    env: str, tmp_path: Path, golden: Golden, capsys: pytest.CaptureFixture[str], request: pytest.FixtureRequest
) -> None:
    assert main(["--definitions", str(SMALL), "render", "--env", env, "--out", str(tmp_path)]) == 0
    rendered = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*.json"))
    assert rendered, "render wrote nothing"
    for relative in rendered:
        golden(f"render/{env}/{relative}", (tmp_path / relative).read_text())
    folder = GOLDEN / "render" / env
    if request.config.getoption("--update-golden"):  # this test owns the folder: a resource gone goes here too
        for stale in set(folder.rglob("*.json")) - {folder / r for r in rendered}:
            stale.unlink()
    expected = sorted(p.relative_to(folder) for p in folder.rglob("*.json"))
    assert rendered == expected, "a resource appeared or disappeared: review, then --update-golden"
    assert f"to {tmp_path}" in capsys.readouterr().out


@pytest.mark.parametrize(("fmt", "suffix"), [("text", "txt"), ("json", "json"), ("markdown", "md")])
def test_offline_plan_report(fmt: str, suffix: str, golden: Golden, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["--definitions", str(SMALL), "plan", "--env", "prod", "--offline", "--format", fmt])
    assert code == 0
    golden(f"plan/prod-offline.{suffix}", capsys.readouterr().out)
