"""Golden files: the test catalogue's exact API bodies and plan reports (tests/fixtures/jobs, not the shipped
example, so that an edit of the example churns none). Regenerate with --update-golden and review."""

from __future__ import annotations

from pathlib import Path

import pytest

from sync.cli.app import main
from tests.conftest import GOLDEN, JOBS, Golden

ENVS = ("dev", "prod", "staging")


@pytest.mark.parametrize("env", ENVS)
def test_rendered_payloads(env: str, tmp_path: Path, golden: Golden, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--definitions", str(JOBS), "render", "--env", env, "--out", str(tmp_path)]) == 0
    rendered = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*.json"))
    assert rendered, "render wrote nothing"
    for relative in rendered:
        golden(f"render/{env}/{relative}", (tmp_path / relative).read_text())
    expected = sorted(p.relative_to(GOLDEN / "render" / env) for p in (GOLDEN / "render" / env).rglob("*.json"))
    assert rendered == expected, "a resource appeared or disappeared: review, then --update-golden"
    assert f"to {tmp_path}" in capsys.readouterr().out


@pytest.mark.parametrize(("fmt", "suffix"), [("text", "txt"), ("json", "json"), ("markdown", "md")])
def test_offline_plan_report(fmt: str, suffix: str, golden: Golden, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["--definitions", str(JOBS), "plan", "--env", "prod", "--offline", "--format", fmt])
    assert code == 0
    golden(f"plan/prod-offline.{suffix}", capsys.readouterr().out)
