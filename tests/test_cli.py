"""The command line as a user runs it: output, files, exit codes, where definitions come from."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import referencing
import yaml

from sync.cli import app
from sync.cli.app import main, parser, reader_gone
from sync.cli.conventions import COMMANDS, Exit
from tests.conftest import EXAMPLE, JOBS, ROOT, desired

FOLDER_KINDS = {"monitors": "metric", "environments": "environment", "dashboards": "dashboard", "scenarios": "scenario"}


def test_validate_reports_counts(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--definitions", str(ROOT / "tests" / "fixtures" / "maintenance"), "validate"]) == 0
    assert capsys.readouterr().out == (
        "ok: 2 queues, 4 metrics, 1 environment "
        "(prod: 2 slo-corrections, 7 downtimes, 12 monitors, 1 dashboard, 2 slos)\n"
    )


def test_definitions_from_environment_variable(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("OBS_DEFINITIONS", str(JOBS))
    assert main(["validate"]) == 0


def test_render_writes_exact_bodies_and_removes_stale_files(tmp_path: Path) -> None:
    stale = tmp_path / "monitors" / "prod.gone.age.json"
    stale.parent.mkdir(parents=True)
    stale.write_text("{}")
    assert main(["--definitions", str(JOBS), "render", "--env", "prod", "--out", str(tmp_path)]) == 0
    assert not stale.exists()
    body = json.loads((tmp_path / "monitors" / "prod.critical.age.json").read_text())
    assert body["options"]["thresholds"]["critical"] == 90  # three times the 30 s SLO
    assert len(list((tmp_path / "monitors").glob("*.json"))) == desired(JOBS, "prod", kinds=("monitor",))
    assert len(list((tmp_path / "composites").glob("*.json"))) == desired(JOBS, "prod", kinds=("composite",)) > 0
    assert [p.name for p in (tmp_path / "dashboards").iterdir()] == ["prod.oncall.json"]
    assert sorted(p.name for p in (tmp_path / "slos").iterdir()) == [
        "prod.critical.slo.json",
        "prod.default.slo.json",
        "prod.high.slo.json",
    ]


@pytest.mark.parametrize("command", [["render", "--env", "prod"], ["render"], ["schemas"]])
def test_an_output_folder_that_is_a_file_is_one_clear_error(
    tmp_path: Path, command: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    taken = tmp_path / "notes.txt"
    taken.write_text("mine")
    assert main(["--definitions", str(JOBS), *command, "--out", str(taken)]) == Exit.ERROR
    err = capsys.readouterr().err
    assert err.startswith(f"error: {taken}") and "check the path" in err, err
    assert "internal error" not in err and "Traceback" not in err
    assert taken.read_text() == "mine"


def test_a_re_render_rewrites_only_the_files_whose_text_changed(tmp_path: Path, example_copy: Path) -> None:
    out = tmp_path / "out"
    assert main(["--definitions", str(example_copy), "render", "--env", "prod", "--out", str(out)]) == 0
    files = sorted(out.rglob("*.json"))
    old = 1_000_000_000  # seconds since the epoch: any write after this shows as a newer time
    for file in files:
        os.utime(file, ns=(old * 10**9, old * 10**9))
    age = example_copy / "monitors" / "age.yaml"
    age.write_text(age.read_text().replace("priority: 1", "priority: 2", 1))
    assert main(["--definitions", str(example_copy), "render", "--env", "prod", "--out", str(out)]) == 0
    touched = {f.relative_to(out).as_posix() for f in files if f.stat().st_mtime_ns != old * 10**9}
    assert touched and all(name.startswith("monitors/prod.") and name.endswith(".age.json") for name in touched)


def test_render_without_env_writes_every_environment_or_nothing(
    tmp_path: Path, example_copy: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["--definitions", str(JOBS), "render", "--out", str(tmp_path / "all")]) == 0
    counts = {
        env: len(list((tmp_path / "all" / env / "monitors").glob("*.json"))) for env in ("dev", "prod", "staging")
    }
    assert counts == {env: desired(JOBS, env, kinds=("monitor",)) for env in counts}
    out = capsys.readouterr().out
    assert "${dashboard_id:KEY}" in out  # the placeholder in dashboard links is said, once

    # A body the API would refuse (found only when checking the rendered bodies): nothing is written.
    board = example_copy / "dashboards" / "oncall.yaml"
    board.write_text(board.read_text().replace("      show_tick: false", "      show_tick: false\n      frobnicate: 1"))
    assert main(["--definitions", str(example_copy), "render", "--out", str(tmp_path / "none")]) == 1
    assert "frobnicate: unknown key" in capsys.readouterr().err
    assert not (tmp_path / "none").exists()


def test_plan_detailed_exit_code(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--definitions", str(JOBS), "plan", "--env", "dev", "--offline", "--detailed-exitcode"]) == 2
    assert main(["--definitions", str(JOBS), "plan", "--env", "dev", "--offline"]) == 0
    out = capsys.readouterr().out
    n = desired(JOBS, "dev")
    assert out.endswith(f"Plan: {n} to create, 0 to update, 0 to delete, 0 unchanged, 0 unmanaged.\n")


def test_plan_json_is_machine_readable(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--definitions", str(JOBS), "plan", "--env", "staging", "--offline", "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["summary"]["create"] == desired(JOBS, "staging")
    assert {c["action"] for c in doc["changes"]} == {"create"}


def test_live_plan_without_offline_is_a_clear_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--definitions", str(JOBS), "plan", "--env", "prod"]) == 1
    assert "--offline" in capsys.readouterr().err


@pytest.mark.example
def test_installed_console_script_runs_offline(tmp_path: Path) -> None:
    """The Quickstart's main job, through the installed entry point, with no credentials in the environment."""
    obs = Path(sys.executable).with_name("obs")
    result = subprocess.run(
        [str(obs), "plan", "--env", "prod", "--offline"],
        cwd=EXAMPLE,
        env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)},
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    n = desired(EXAMPLE, "prod")
    assert result.stdout.endswith(f"Plan: {n} to create, 0 to update, 0 to delete, 0 unchanged, 0 unmanaged.\n")


def test_schemas_name_the_schema_path_each_folder_needs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "defs").mkdir()
    assert main(["--definitions", "defs", "schemas", "--out", "defs/schemas"]) == 0
    lines = capsys.readouterr().out.splitlines()[1:]
    said = {line.split()[0]: line.rsplit("$schema=", 1)[1] for line in lines}
    assert said == {
        "queues.yaml": "schemas/queues.schema.json",
        "environments/*.yaml": "../schemas/environment.schema.json",
        "monitors/*.yaml": "../schemas/metric.schema.json",
        "dashboards/*.yaml": "../schemas/dashboard.schema.json",
        "scenarios/*.yaml": "../schemas/scenario.schema.json",
    }
    for pattern, path in said.items():  # each resolves, from where such a file sits, to a schema written
        assert ((tmp_path / "defs" / pattern).parent / path).resolve().is_file()


@pytest.mark.example
def test_schemas_are_written_for_editors_and_validate_the_example(tmp_path: Path) -> None:
    assert main(["schemas", "--out", str(tmp_path)]) == 0
    schemas = {p.name: json.loads(p.read_text()) for p in tmp_path.glob("*.schema.json")}
    kinds = ("queues", "environment", "metric", "dashboard", "settings", "scenario", "catalogue")
    assert set(schemas) == {f"{k}.schema.json" for k in kinds}
    registry: referencing.Registry[Any] = referencing.Registry().with_resources(
        (name, referencing.Resource.from_contents(s)) for name, s in schemas.items()
    )
    files = [(kind, p) for folder, kind in FOLDER_KINDS.items() for p in sorted((EXAMPLE / folder).glob("*.yaml"))]
    assert {kind for kind, _ in files} == set(FOLDER_KINDS.values()), "every kind of file is checked"
    for kind, file in [*files, ("queues", EXAMPLE / "queues.yaml")]:
        first_line = file.read_text().splitlines()[0]
        assert first_line.endswith(f"{kind}.schema.json"), f"{file.name} names its schema for editors"
        validator = jsonschema.Draft202012Validator(schemas[f"{kind}.schema.json"], registry=registry)
        validator.validate(yaml.safe_load(file.read_text()))


@pytest.mark.parametrize(
    "argv", [["plan", "--env", "prod", "--offline", "--format", "yaml"], ["render", "--env", "prod"], ["frobnicate"]]
)
def test_usage_errors_exit_1_not_the_changes_pending_code(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    assert exit_info.value.code == 1
    assert "error:" in capsys.readouterr().err


@pytest.mark.parametrize("argv", [["validate", "--definitions"], ["trace", "--topic", "t", "--format", "markdown"]])
def test_usage_errors_after_the_command_exit_1_too(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    assert exit_info.value.code == 1
    assert "error:" in capsys.readouterr().err


def test_exit_codes_keep_their_values() -> None:
    """CI scripts branch on these numbers: changing one breaks pipelines silently."""
    assert {code.name: code.value for code in Exit} == {
        "OK": 0,
        "ERROR": 1,
        "CHANGES": 2,
        "FOUND": 3,
        "INTERRUPTED": 130,
        "PIPE_CLOSED": 141,
    }


@pytest.mark.parametrize("command", [["validate"], ["plan", "--env", "prod", "--offline"], ["--version"]])
def test_a_reader_that_leaves_early_gets_no_traceback(command: list[str]) -> None:
    """`obs test | head -1`: head exits after its line; obs stops quietly, as a command cut off by its reader does."""
    read_end, write_end = os.pipe()
    os.close(read_end)  # the reader has left before obs writes anything
    with os.fdopen(write_end, "wb") as stdout:
        result = subprocess.run(
            [sys.executable, "-m", "sync.cli", "--definitions", str(EXAMPLE), *command],
            stdout=stdout,
            stderr=subprocess.PIPE,
            text=True,
            check=False,
        )
    assert result.stderr == ""
    assert result.returncode in (Exit.PIPE_CLOSED, Exit.OK)  # --version exits through argparse, with 0
    if command != ["--version"]:
        assert result.returncode == Exit.PIPE_CLOSED


def test_a_broken_pipe_is_told_apart_from_a_reader_still_there() -> None:
    read_end, write_end = os.pipe()
    with os.fdopen(write_end, "w") as writer:
        assert not reader_gone(writer)
        os.close(read_end)
        assert reader_gone(writer)


def test_global_options_after_the_command(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)  # the default folder has no definitions
    assert main(["validate", "--definitions", str(JOBS)]) == 0
    assert main(["plan", "--env", "dev", "--offline", "--definitions", str(JOBS), "--detailed-exitcode"]) == 2
    capsys.readouterr()

    # Given on both sides, the one after the command wins, whichever folder is the good one.
    assert main(["--definitions", str(tmp_path), "validate", "--definitions", str(JOBS)]) == 0
    assert main(["--definitions", str(JOBS), "validate", "--definitions", str(tmp_path)]) == 1
    assert "no queues.yaml" in capsys.readouterr().err

    # The environment variable is only the default: a folder given after the command wins over it too.
    monkeypatch.setenv("OBS_DEFINITIONS", str(tmp_path))
    assert main(["validate", "--definitions", str(JOBS)]) == 0
    assert main(["validate"]) == 1


def test_debug_is_read_before_and_after_the_command() -> None:
    assert parser().parse_args(["validate"]).debug is False
    assert parser().parse_args(["--debug", "validate"]).debug is True
    assert parser().parse_args(["validate", "--debug"]).debug is True


def test_trace_still_takes_table_as_its_text_format() -> None:
    assert parser().parse_args(["trace", "--topic", "t", "--format", "table"]).format == "text"
    assert parser().parse_args(["trace", "--topic", "t"]).format == "text"


def _command_names() -> list[str]:
    """Every subcommand, read from the parser itself, so one added later is checked too."""
    (commands,) = (a for a in parser()._actions if isinstance(a, argparse._SubParsersAction))
    return sorted(commands.choices)


def test_every_command_is_found() -> None:
    assert set(_command_names()) >= {"validate", "render", "plan", "sync", "diff", "links", "schemas", "trace"}


@pytest.mark.parametrize("command", _command_names())
def test_every_command_has_help(command: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main([command, "--help"])
    assert exit_info.value.code == 0
    out = capsys.readouterr().out
    assert out.startswith(f"usage: obs {command} ")
    # The global options are listed where they are accepted; obs init writes definitions and reads none.
    assert ("--definitions DIR" in out) == (command != "init")


def test_top_level_help_names_every_command(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["--help"])
    assert exit_info.value.code == 0
    out = capsys.readouterr().out
    assert out.startswith("usage: obs ")
    for command in _command_names():
        assert f"\n    {command} " in out


def test_the_top_level_help_loads_no_command() -> None:
    # `obs --help` lists every command from the table of commands: loading their modules took it a second.
    probe = "import sys\nfrom sync.cli.app import main\ntry:\n    main(['--help'])\nexcept SystemExit:\n    pass\n"
    probe += "print(*sorted(sys.modules))"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("usage: obs ")
    loaded = set(done.stdout.splitlines()[-1].split())
    assert not loaded & {f"sync.cli.{module}" for _, module, _ in COMMANDS}
    assert all(f"\n    {name} " in done.stdout for name, _, _ in COMMANDS)


def test_python_m_sync_cli_is_the_command_line() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "sync.cli", "sync", "--help"], capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("usage: obs sync ")
    assert "(10% of the managed ones)" in " ".join(result.stdout.split())  # the % printed once, as written


def test_a_command_loads_only_its_own_module() -> None:
    # `obs validate` runs without the AWS and Datadog clients or the backtest's engine in memory: each would
    # cost every command start-up time.
    probe = "import sys; from sync.cli.app import main; main(sys.argv[1:]); print(*sorted(sys.modules))"
    argv = [sys.executable, "-c", probe, "--color", "never", "validate"]
    done = subprocess.run(argv, cwd=EXAMPLE, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    modules = set(done.stdout.splitlines()[-1].split())
    assert "sync.cli.validate" in modules
    assert not modules & {"boto3", "sync.cli.replaying", "sync.cli.backtest", "sync.cli.audit"}
    # The command is found past global options, and a value of one is not taken for it.
    for argv in (["validate"], ["--definitions", ".", "validate"], ["--debug", "validate", "--format", "json"]):
        assert app._command_in(argv) == "validate", argv
    assert app._command_in(["--definitions", "plan", "--help"]) == ""
    # `obs test` runs the scenarios without them too: only --record reads real history.
    scenarios = ROOT / "tests" / "fixtures" / "evaluation"
    done = subprocess.run(
        [sys.executable, "-c", probe, "--definitions", str(scenarios), "test", "--scenario", "stall"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    modules = set(done.stdout.splitlines()[-1].split())
    assert "sync.core.evaluation.simulate" in modules
    assert not modules & {"boto3", "datadog_api_client", "sync.cli.record", "sync.cli.backtest"}
