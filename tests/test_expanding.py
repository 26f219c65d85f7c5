"""Environments expanded at once, in forked processes, give exactly what one process gives; a problem in any
of them is reported as one process reports it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from sync.cli import expanding
from sync.definitions.load import load
from sync.expand import desired
from tests.test_diff import generated_queues

# Run in a child process: the suite's workers run threads, and forking a process that runs threads is unsafe.
_PROBE = """
import os, pickle, sys
from pathlib import Path
from sync.cli import expanding
from sync.definitions.load import load
from sync.expand import desired
defs = load(Path(sys.argv[1]))
assert expanding._worth_forking(defs, defs.environments), "the fixture is too small to fork"
at_once = expanding.checked(defs, None, expanding.resources)
one_by_one = desired.expand_all(defs)
assert list(at_once) == list(one_by_one)
assert at_once == one_by_one
# What is kept of an environment is worked out in the process that expanded it: only that comes back.
where = expanding.checked(defs, None, lambda resources: (os.getpid(), len(resources)))
assert os.getpid() not in {pid for pid, _ in where.values()}
assert {name: n for name, (_, n) in where.items()} == {name: len(r) for name, r in one_by_one.items()}
sys.stdout.write(str(sum(len(r) for r in at_once.values())))
"""


def _big(example_copy: Path, queues: int) -> Path:
    path = example_copy / "queues.yaml"
    path.write_text(path.read_text() + generated_queues(queues))
    return example_copy


def test_environments_expanded_at_once_are_what_one_process_expands(example_copy: Path) -> None:
    defs = _big(example_copy, 150)
    done = subprocess.run([sys.executable, "-c", _PROBE, str(defs)], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert int(done.stdout) > expanding.WORTH_FORKING  # thousands of resources came back from the processes


def test_small_definitions_are_expanded_in_this_process(example_copy: Path) -> None:
    defs = load(example_copy)
    assert not expanding._worth_forking(defs, defs.environments)
    assert expanding.expand_all(defs) == desired.expand_all(defs)


def test_a_body_the_api_would_reject_is_reported_as_one_process_reports_it(example_copy: Path) -> None:
    defs = _big(example_copy, 150)
    board = defs / "dashboards" / "oncall.yaml"
    note = "      type: note\n"
    assert note in board.read_text()
    board.write_text(board.read_text().replace(note, note + "      colour: red\n", 1))
    argv = [sys.executable, "-m", "sync.cli", "--definitions", str(defs), "validate"]
    done = subprocess.run(argv, capture_output=True, text=True, check=False)
    assert done.returncode == 1, done.stderr
    expected = "the Datadog API would reject widgets[0].definition.colour: unknown key (in dev, prod, staging)"
    assert f"dashboards/oncall.yaml:20: {expected}" in done.stderr, done.stderr
    assert "Traceback" not in done.stderr
