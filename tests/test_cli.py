"""The command line as a user runs it: output, files, exit codes, where definitions come from."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import referencing
import yaml

from sync.cli.app import main
from tests.conftest import ROOT


def test_validate_reports_counts(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--definitions", str(ROOT), "validate"]) == 0
    assert capsys.readouterr().out == (
        "ok: 6 queues, 10 metrics, 3 environments "
        "(dev: 33 monitors, 1 dashboard, prod: 49 monitors, 1 dashboard, staging: 49 monitors, 1 dashboard)\n"
    )


def test_definitions_from_environment_variable(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("OBS_DEFINITIONS", str(ROOT))
    assert main(["validate"]) == 0


def test_render_writes_exact_bodies_and_removes_stale_files(tmp_path: Path) -> None:
    stale = tmp_path / "monitors" / "prod.gone.age.json"
    stale.parent.mkdir(parents=True)
    stale.write_text("{}")
    assert main(["--definitions", str(ROOT), "render", "--env", "prod", "--out", str(tmp_path)]) == 0
    assert not stale.exists()
    body = json.loads((tmp_path / "monitors" / "prod.critical.age.json").read_text())
    assert body["options"]["thresholds"]["critical"] == 30
    assert len(list((tmp_path / "monitors").glob("*.json"))) == 49
    assert [p.name for p in (tmp_path / "dashboards").iterdir()] == ["prod.oncall.json"]


def test_render_without_env_writes_every_environment_or_nothing(
    tmp_path: Path, example_copy: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["--definitions", str(ROOT), "render", "--out", str(tmp_path / "all")]) == 0
    counts = {
        env: len(list((tmp_path / "all" / env / "monitors").glob("*.json"))) for env in ("dev", "prod", "staging")
    }
    assert counts == {"dev": 33, "prod": 49, "staging": 49}
    out = capsys.readouterr().out
    assert "${dashboard_id:KEY}" in out  # the placeholder in dashboard links is said, once

    # A body the API would refuse (found only when checking the rendered bodies): nothing is written.
    board = example_copy / "dashboards" / "oncall.yaml"
    board.write_text(board.read_text().replace("      show_tick: false", "      show_tick: false\n      frobnicate: 1"))
    assert main(["--definitions", str(example_copy), "render", "--out", str(tmp_path / "none")]) == 1
    assert "frobnicate: unknown key" in capsys.readouterr().err
    assert not (tmp_path / "none").exists()


def test_plan_detailed_exit_code(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--definitions", str(ROOT), "plan", "--env", "dev", "--offline", "--detailed-exitcode"]) == 2
    assert main(["--definitions", str(ROOT), "plan", "--env", "dev", "--offline"]) == 0
    out = capsys.readouterr().out
    assert out.endswith("Plan: 34 to create, 0 to update, 0 to delete, 0 unchanged, 0 unmanaged.\n")


def test_plan_json_is_machine_readable(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--definitions", str(ROOT), "plan", "--env", "staging", "--offline", "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["summary"]["create"] == 50
    assert {c["action"] for c in doc["changes"]} == {"create"}


def test_live_plan_without_offline_is_a_clear_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--definitions", str(ROOT), "plan", "--env", "prod"]) == 1
    assert "--offline" in capsys.readouterr().err


def test_installed_console_script_runs_offline(tmp_path: Path) -> None:
    """The Quickstart's main job, through the installed entry point, with no credentials in the environment."""
    obs = Path(sys.executable).with_name("obs")
    result = subprocess.run(
        [str(obs), "plan", "--env", "prod", "--offline"],
        cwd=ROOT,
        env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)},
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.endswith("Plan: 50 to create, 0 to update, 0 to delete, 0 unchanged, 0 unmanaged.\n")


def test_schemas_are_written_for_editors_and_validate_the_example(tmp_path: Path) -> None:
    assert main(["schemas", "--out", str(tmp_path)]) == 0
    schemas = {p.name: json.loads(p.read_text()) for p in tmp_path.glob("*.schema.json")}
    assert set(schemas) == {f"{k}.schema.json" for k in ("queues", "environment", "metric", "dashboard", "settings")}
    registry: referencing.Registry[Any] = referencing.Registry().with_resources(
        (name, referencing.Resource.from_contents(s)) for name, s in schemas.items()
    )
    for kind, file in [
        ("metric", "monitors/age.yaml"),
        ("environment", "environments/prod.yaml"),
        ("queues", "queues.yaml"),
    ]:
        first_line = (ROOT / file).read_text().splitlines()[0]
        assert first_line.endswith(f"{kind}.schema.json"), "each example file names its schema for editors"
        validator = jsonschema.Draft202012Validator(schemas[f"{kind}.schema.json"], registry=registry)
        validator.validate(yaml.safe_load((ROOT / file).read_text()))


@pytest.mark.parametrize(
    "argv", [["plan", "--env", "prod", "--offline", "--format", "yaml"], ["render", "--env", "prod"], ["frobnicate"]]
)
def test_usage_errors_exit_1_not_the_changes_pending_code(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    assert exit_info.value.code == 1
    assert "error:" in capsys.readouterr().err
