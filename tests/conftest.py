"""Shared fixtures: the test catalogue and copies of it to break, golden files, and the CLI run against the fake
Datadog.

Unit and integration tests run on definitions of their own under tests/fixtures/ (JOBS, a frozen catalogue of
six queues, and smaller sets), never on the shipped example: an edit of the example (a queue or metric added, a
threshold raised, a metric renamed) breaks no count, line or golden file. The tests marked `example` check the
shipped example itself (validate, obs test, render and plan); they read it from OBS_EXAMPLE, the repository
root by default, so that they also run against an edited copy (tests/test_example_edits.py)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from sync.cli.app import main
from sync.cli.live import RETRY_WAIT_ENV
from sync.definitions.load import load
from sync.definitions.model import Definitions
from sync.expand.desired import expand

from .fakedd import FakeDatadog

ROOT = Path(__file__).resolve().parent.parent
JOBS = ROOT / "tests" / "fixtures" / "jobs"
SMALL = ROOT / "tests" / "fixtures" / "small"
EXAMPLE = Path(os.environ.get("OBS_EXAMPLE") or ROOT)
GOLDEN = ROOT / "tests" / "golden"
DEFINITION_PARTS = ("queues.yaml", "environments", "monitors", "dashboards")


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--update-golden", action="store_true", help="rewrite golden files from current output")


@pytest.fixture(autouse=True, scope="session")
def _short_retry_waits() -> Iterator[None]:
    """Failed requests are tried again after 10 ms, not half a second: the tests check the retries, not the waits."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(RETRY_WAIT_ENV, "0.01")
        yield


@pytest.fixture(scope="session")
def example() -> Definitions:
    """The test catalogue, loaded (named `example` for history: it began as a copy of the shipped example)."""
    return load(JOBS)


@pytest.fixture
def example_copy(tmp_path: Path) -> Path:
    """A writable copy of the test catalogue's definitions."""
    target = tmp_path / "defs"
    target.mkdir()
    for part in DEFINITION_PARTS:
        source = JOBS / part
        if source.is_dir():
            shutil.copytree(source, target / part)
        else:
            shutil.copy(source, target / part)
    return target


Golden = Callable[[str, str], None]
GOLDEN_WRITTEN = pytest.StashKey[set[Path]]()
DESELECTED = pytest.StashKey[bool]()


def pytest_configure(config: pytest.Config) -> None:
    config.stash[GOLDEN_WRITTEN] = set()
    config.stash[DESELECTED] = False


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int | None:
    """`-n auto` (addopts): one worker more than the cores. Some of the suite's time is waiting (the timeouts and
    grace periods tests check, child processes starting), which the extra worker fills: on two cores the suite
    took 199 s with two workers and 170 s with three (four: 171 s). PYTEST_XDIST_AUTO_NUM_WORKERS still wins."""
    if os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS"):
        return None
    return len(os.sched_getaffinity(0)) + 1 if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1) + 1


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The tests marked `heavy` first, longest first, the rest in their order: the workers take the first tests
    in turn, so the longest ones start at once on different workers instead of one of them ending the run alone."""

    def seconds(item: pytest.Item) -> float:
        marker = item.get_closest_marker("heavy")
        return -float(marker.args[0]) if marker else 0.0

    items.sort(key=seconds)


def pytest_deselected(items: list[pytest.Item]) -> None:
    if items:
        items[0].config.stash[DESELECTED] = True


@pytest.fixture
def golden(request: pytest.FixtureRequest) -> Golden:
    """Compare text with tests/golden/<name>; --update-golden rewrites it instead."""
    update = bool(request.config.getoption("--update-golden"))
    written = request.config.stash[GOLDEN_WRITTEN]

    def check(name: str, text: str) -> None:
        path = GOLDEN / name
        if update:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
            written.add(path)
        assert path.exists(), f"missing golden file {name}: run pytest --update-golden and review it"
        assert text == path.read_text(), f"{name} differs from its golden file (pytest --update-golden)"

    return check


def pytest_testnodedown(node: Any, error: object) -> None:
    """pytest-xdist: the golden files a worker wrote, so that the controller knows every one before pruning."""
    output = getattr(node, "workeroutput", {})
    node.config.stash[GOLDEN_WRITTEN].update(Path(p) for p in output.get("golden_written", ()))
    if output.get("golden_deselected"):  # a worker left tests out (-k, -m): the run is not whole
        node.config.stash[DESELECTED] = True


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """After a whole, green `pytest --update-golden`, delete the golden files no test wrote: they are stale.
    A partial run (paths, -k, -m, a failure) cannot know which files the tests it left out would write."""
    config = session.config
    if not config.getoption("--update-golden"):
        return
    if hasattr(config, "workeroutput"):  # a pytest-xdist worker: it hands what it wrote to the controller
        config.workeroutput["golden_written"] = sorted(str(p) for p in config.stash[GOLDEN_WRITTEN])
        config.workeroutput["golden_deselected"] = config.stash[DESELECTED]
        return
    whole = config.args_source == pytest.Config.ArgsSource.TESTPATHS and not config.stash[DESELECTED]
    whole = whole and exitstatus == 0 and not session.testsfailed
    stale = sorted(p for p in GOLDEN.rglob("*") if p.is_file() and p not in config.stash[GOLDEN_WRITTEN])
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    if not whole:
        if stale and reporter:
            reporter.write_line(f"golden: {len(stale)} files not written; a whole, green run deletes stale ones")
        return
    for path in stale:
        path.unlink()
    for folder in sorted((p for p in GOLDEN.rglob("*") if p.is_dir()), reverse=True):
        if not any(folder.iterdir()):
            folder.rmdir()
    if reporter:
        reporter.write_line(f"golden: deleted {len(stale)} stale files")


@pytest.fixture
def dd(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeDatadog]:
    with FakeDatadog() as fake:
        monkeypatch.setenv("DD_API_KEY", fake.api_key)
        monkeypatch.setenv("DD_APP_KEY", fake.app_key)
        monkeypatch.setenv("DD_HOST", fake.url)
        monkeypatch.delenv("DD_SITE", raising=False)
        yield fake


class Obs:
    """Runs the CLI on one definitions folder and keeps what it printed."""

    def __init__(self, definitions: Path, capsys: pytest.CaptureFixture[str]) -> None:
        self.definitions = definitions
        self.capsys = capsys
        self.out = self.err = ""

    def __call__(self, *argv: str) -> int:
        code = main(["--definitions", str(self.definitions), *argv])
        self.out, self.err = self.capsys.readouterr()
        return code

    def plan(self, env: str = "prod") -> dict[str, Any]:
        assert self("plan", "--env", env, "--format", "json") == 0, self.err
        plan: dict[str, Any] = json.loads(self.out)
        return plan


@pytest.fixture
def obs(example_copy: Path, capsys: pytest.CaptureFixture[str]) -> Obs:
    return Obs(example_copy, capsys)


@pytest.fixture
def plain_git(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Git as on a fresh machine: no user or system config (signing, hooks, default branch) leaks in."""
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", os.devnull)
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    monkeypatch.setenv("HOME", str(tmp_path))
    # Fixed dates: the same commits get the same ids, so reports that name them stay golden.
    monkeypatch.setenv("GIT_AUTHOR_DATE", "2026-01-01T00:00:00Z")
    monkeypatch.setenv("GIT_COMMITTER_DATE", "2026-01-01T00:00:00Z")


def desired(definitions: Path, *envs: str, kinds: tuple[str, ...] = ()) -> int:
    """How many objects (of these kinds) the definitions render for these environments (all, when none is
    named): what a test of the engine counts against, so that an edit of the shipped example breaks no count."""
    defs = load(definitions)
    rendered = [r for env in envs or [e.name for e in defs.environments] for r in expand(defs, env)]
    return sum(1 for r in rendered if not kinds or r.kind.name in kinds)


def git(repo: Path, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True, check=True)
    return done.stdout


def commit(repo: Path, message: str) -> None:
    git(repo, "add", "-A")
    git(repo, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "-m", message)


@pytest.fixture
def repo(example_copy: Path, plain_git: None) -> Path:
    """The example definitions as the one commit of a new repository."""
    git(example_copy, "init", "-q")
    commit(example_copy, "base")
    return example_copy


Run = Callable[..., tuple[int, str, str]]


@pytest.fixture
def run(capsys: pytest.CaptureFixture[str]) -> Run:
    def diff(definitions: Path, *args: str) -> tuple[int, str, str]:
        code = main(["--definitions", str(definitions), "diff", *args])
        out, err = capsys.readouterr()
        return code, out, err

    return diff
