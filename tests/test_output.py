"""What every command's output shares: --version, colour only where a person reads it, obs test's progress,
and the JSON documents of validate and maintenance list."""

from __future__ import annotations

import importlib.metadata
import io
import json
import re
import tomllib
from pathlib import Path

import pytest

from sync.cli import colour
from sync.cli.app import main
from sync.cli.progress import Progress
from sync.core.conditions import ConditionChange
from sync.preview.compare import Preview
from sync.preview.report import paging_summary
from sync.report.vocabulary import many
from tests.conftest import JOBS, ROOT, Obs, Run
from tests.fakedd import FakeDatadog

ESCAPE = re.compile(r"\x1b\[[0-9;]*m")
FIXTURE = ROOT / "tests" / "fixtures" / "evaluation"


def test_version_is_the_installed_package_s(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["--version"])
    assert exit_info.value.code == 0
    assert capsys.readouterr().out == f"obs {importlib.metadata.version('obs')}\n"


def test_the_licence_file_is_the_one_pyproject_names() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert project["license"] == "Apache-2.0" and project["license-files"] == ["LICENSE"]
    text = (ROOT / "LICENSE").read_text()
    assert text.split()[:4] == ["Apache", "License", "Version", "2.0,"]
    assert "END OF TERMS AND CONDITIONS" in text and "APPENDIX: How to apply the Apache License" in text
    assert len(text.splitlines()) == 202  # the whole text as the ASF publishes it, appendix included


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.mark.parametrize(
    ("choice", "terminal", "environ", "wanted"),
    [
        ("auto", True, {}, True),
        ("auto", False, {}, False),  # piped, redirected, captured
        ("auto", True, {"NO_COLOR": "1"}, False),
        ("auto", True, {"NO_COLOR": ""}, True),  # no-color.org: set and not empty
        ("auto", True, {"TERM": "dumb"}, False),
        ("always", False, {"NO_COLOR": "1"}, True),
        ("never", True, {}, False),
    ],
)
def test_colour_only_where_a_person_reads_it(
    choice: str, terminal: bool, environ: dict[str, str], wanted: bool
) -> None:
    stream = _Terminal() if terminal else io.StringIO()
    assert colour.wanted(choice, stream, environ) is wanted


def test_plan_is_coloured_only_when_asked_or_on_a_terminal(capsys: pytest.CaptureFixture[str]) -> None:
    plan = ["--definitions", str(JOBS), "plan", "--env", "prod", "--offline"]
    assert main(plan) == 0
    plain = capsys.readouterr().out
    assert not ESCAPE.search(plain), "captured output is not a terminal"
    assert main([*plan, "--color", "always"]) == 0
    coloured = capsys.readouterr().out
    assert "\x1b[32m+ monitor " in coloured
    assert ESCAPE.sub("", coloured) == plain
    assert main(["--color", "never", *plan]) == 0  # before the command too
    assert capsys.readouterr().out == plain


def test_obs_test_is_coloured_only_when_asked(capsys: pytest.CaptureFixture[str]) -> None:
    run = ["--definitions", str(FIXTURE), "test", "--scenario", "stall"]
    assert main(run) == 0
    plain = capsys.readouterr()
    assert not ESCAPE.search(plain.out) and plain.err == "", "no progress or colour off a terminal"
    assert main([*run, "--color", "always"]) == 0
    coloured = capsys.readouterr().out
    assert coloured.startswith("\x1b[32mpass\x1b[0m  consumers stall")
    assert ESCAPE.sub("", coloured) == plain.out


def test_json_output_is_never_coloured(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--definitions", str(FIXTURE), "test", "--format", "json", "--color", "always"]) in (0, 1)
    document = json.loads(capsys.readouterr().out)
    assert document["assumptions"], "the JSON always says each assumption in full"
    assert all(a["code"] and a["text"] for a in document["assumptions"])


def test_progress_shows_after_two_seconds_and_clears_its_line() -> None:
    now = [0.0]
    stream = io.StringIO()
    progress = Progress("obs test", 10, stream, shown=True, clock=lambda: now[0])
    progress.done(3)
    assert stream.getvalue() == "", "a quick run stays silent"
    now[0] = 2.5
    progress.done(4)
    assert stream.getvalue() == "\robs test: 4 of 10 done, 2 s"
    now[0] = 2.6
    progress.done(5)  # redrawn at most four times a second
    assert stream.getvalue().count("\r") == 1
    now[0] = 3.0
    progress.done(6)
    assert stream.getvalue().endswith("\robs test: 6 of 10 done, 3 s")
    progress.close()
    assert stream.getvalue().endswith("\r" + " " * len("obs test: 6 of 10 done, 3 s") + "\r")


def test_progress_is_not_shown_off_a_terminal() -> None:
    now = [0.0]
    stream = io.StringIO()
    progress = Progress("obs test", 10, stream, clock=lambda: now[0])
    now[0] = 60.0
    progress.done(9)
    progress.close()
    assert stream.getvalue() == ""


def test_validate_json_has_every_field(capsys: pytest.CaptureFixture[str]) -> None:
    assert (
        main(["--definitions", str(ROOT / "tests" / "fixtures" / "maintenance"), "validate", "--format", "json"]) == 0
    )
    document = json.loads(capsys.readouterr().out)
    assert document == {
        "version": 1,
        "ok": True,
        "errors": [],
        "notes": [],
        "warnings": [],
        "queues": 2,
        "metrics": 4,
        "scenarios": 0,
        "environments": {
            "prod": {"dashboard": 1, "downtime": 7, "monitor": 12, "slo": 2, "slo-correction": 2},
        },
    }


def test_validate_json_gives_each_error_where_it_is(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "queues.yaml").write_text("classes: {}\nqueues: []\nbogus: 1\n")
    assert main(["--definitions", str(tmp_path), "validate", "--format", "json"]) == 1
    out = capsys.readouterr()
    document = json.loads(out.out)
    assert document["ok"] is False and document["errors"]
    assert document["queues"] is None and document["environments"] is None
    for error in document["errors"]:
        assert set(error) == {"file", "line", "key", "what", "fix"}
        assert error["what"]
    assert any(e["file"] == "queues.yaml" for e in document["errors"]), document["errors"]


def test_maintenance_list_json(obs: Obs, dd: FakeDatadog) -> None:
    assert obs("sync", "--env", "prod") == 0, obs.err
    assert obs("maintenance", "start", "--env", "prod", "--queue", "high", "--for", "2h", "--reason", "disk swap") == 0
    assert obs("maintenance", "list", "--env", "prod", "--format", "json") == 0, obs.err
    document = json.loads(obs.out)
    assert document["env"] == "prod"
    windows = document["windows"]
    fields = {"kind", "name", "schedule", "reason", "queue", "metric", "start", "end", "remaining"}
    assert windows and all(set(w) == fields for w in windows)
    adhoc = [w for w in windows if w["kind"] == "ad-hoc"]
    assert len(adhoc) == 7 and {w["queue"] for w in adhoc} == {"high"}
    assert all(w["reason"] == "disk swap" and w["name"] is None and w["end"] for w in adhoc)
    planned = [w for w in windows if w["kind"] == "planned"]
    assert {w["name"] for w in planned} >= {"nightly-migrations"}
    assert all(w["schedule"] and w["reason"] is None for w in planned)
    # The text lists the same windows, grouped.
    assert obs("maintenance", "list", "--env", "prod") == 0, obs.err
    assert "ad-hoc  disk swap: " in obs.out and "planned  nightly-migrations  " in obs.out


def test_diff_is_coloured_only_when_asked(repo: Path, run: Run) -> None:
    queues = repo / "queues.yaml"
    queues.write_text(queues.read_text().replace("slo_seconds: 30", "slo_seconds: 45", 1))
    code, plain, _ = run(repo, "--base", "HEAD")
    assert code == 0 and "~ monitor " in plain
    assert not ESCAPE.search(plain)
    code, coloured, _ = run(repo, "--base", "HEAD", "--color", "always")
    assert code == 0 and "\x1b[33m  ~ monitor " in coloured
    assert ESCAPE.sub("", coloured) == plain


def test_a_count_takes_the_number_of_its_noun() -> None:
    assert [many(n, "metric") for n in (0, 1, 2)] == ["0 metrics", "1 metric", "2 metrics"]


def test_one_paging_monitor_pages_at_another_point() -> None:
    def summary(*keys: tuple[str, ...]) -> list[tuple[str, str, str]]:
        moved = tuple(ConditionChange("prod", ("@pd",), "above 1", "above 2", k) for k in keys)
        return paging_summary(Preview("a", "b", plans=(), paging=(), conditions=moved))

    assert summary(("prod/q/age",)) == [("prod", "alert condition", "1 paging monitor pages at another point")]
    assert summary(("prod/q/age",), ("prod/r/age", "prod/s/age")) == [
        ("prod", "alert condition", "3 paging monitors page at another point")
    ]
