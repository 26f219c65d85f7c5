"""`obs diff` runs the base revision's own code when a change edits obs: that child gets no credential of
the caller, its renders are cached per version of the running obs in a folder only its user can read, and a
base file the hardened loader refuses is a clear error."""

from __future__ import annotations

import json
import shutil
import stat
from pathlib import Path

import pytest

from sync.cli.app import main
from tests.conftest import ROOT, Run, commit
from tests.test_diff import edit

SECRETS = {
    "AWS_ACCESS_KEY_ID": "AKIAEXAMPLE",
    "AWS_SECRET_ACCESS_KEY": "example",
    "AWS_SESSION_TOKEN": "example",
    "GH_TOKEN": "ghs_example",
    "GITHUB_TOKEN": "ghs_example",
    "ACTIONS_ID_TOKEN_REQUEST_TOKEN": "example",
    "ACTIONS_ID_TOKEN_REQUEST_URL": "https://token.example",
    "DD_API_KEY": "example",
    "OBS_DEFINITIONS": "elsewhere",
}


def base_that_records_its_environment(repo: Path, seen: Path) -> None:
    """A base commit whose obs writes the names and values of its environment to `seen` when it runs."""
    shutil.copytree(ROOT / "sync", repo / "sync", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", repo / "pyproject.toml")
    record = f"    open({str(seen)!r}, 'w').write(__import__('json').dumps(dict(os.environ)))\n"
    edit(repo, "sync/cli/app.py", "    gc.set_threshold(", record + "    gc.set_threshold(")
    commit(repo, "obs that records what it can see")
    shutil.rmtree(repo / "sync")
    shutil.copytree(ROOT / "sync", repo / "sync", ignore=shutil.ignore_patterns("__pycache__"))


def test_the_base_code_runs_without_the_callers_credentials(
    repo: Path, run: Run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen = tmp_path / "child-environment.json"
    base_that_records_its_environment(repo, seen)
    for name, value in {**SECRETS, "LC_ALL": "C.UTF-8", "LANG": "C.UTF-8"}.items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    monkeypatch.delenv("OBS_CACHE_DIR", raising=False)
    code, out, err = run(repo, "--base", "HEAD", "--env", "dev")
    assert (code, err) == (0, ""), err
    assert "the base was rendered by its own code" in out
    child = json.loads(seen.read_text())
    assert set(child) - {"PATH", "HOME", "LANG", "TMPDIR", "SYSTEMROOT", "PYTHONPATH"} == {"LC_ALL"}
    assert child["LC_ALL"] == "C.UTF-8" and child["PYTHONPATH"] != ""

    cache = tmp_path / ".cache" / "obs"  # HOME is tmp_path (plain_git)
    assert stat.S_IMODE(cache.stat().st_mode) == 0o700, "only its user reads or writes the cached renders"
    (render,) = cache.glob("render-*")
    assert render.name.startswith("render-obs-"), "keyed by the running obs too"


def test_a_cache_folder_others_can_write_is_made_private(
    repo: Path, run: Run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    base_that_records_its_environment(repo, tmp_path / "seen.json")
    cache = tmp_path / "shared-cache"
    cache.mkdir(mode=0o777)
    cache.chmod(0o777)
    monkeypatch.setenv("OBS_CACHE_DIR", str(cache))
    code, out, err = run(repo, "--base", "HEAD", "--env", "dev")
    assert (code, err) == (0, ""), err
    assert "the base was rendered by its own code" in out
    assert stat.S_IMODE(cache.stat().st_mode) == 0o700


def test_a_deeply_nested_base_file_is_a_clear_error(repo: Path, run: Run) -> None:
    path = repo / "environments" / "dev.yaml"
    fixed = path.read_text()
    path.write_text(fixed + "x: " + "[" * 2000 + "]" * 2000 + "\n")
    commit(repo, "a base nested too deep")
    path.write_text(fixed)
    code, out, err = run(repo, "--base", "HEAD", "--env", "dev")
    assert code == 1 and out == ""
    assert err.startswith("error: the base revision 'HEAD' does not load with this version of obs")
    assert "\nenvironments/dev.yaml:" in err and "nesting depth" in err, "the file, its line and what is wrong"
    assert "RecursionError" not in err and "internal error" not in err


def test_the_help_says_the_base_code_is_executed(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["diff", "--help"])
    shown = " ".join(capsys.readouterr().out.split())
    assert "the base revision's own code is executed" in shown and "its code is executed when" in shown
