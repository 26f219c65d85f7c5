"""Legitimate edits of the shipped example keep the suite green: the tests marked `example` (validate, obs test,
render, plan, links, sync) run against an edited copy of it, in a child pytest with OBS_EXAMPLE naming the copy.
Nothing else in the suite reads the example, so nothing else can break on such an edit."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from sync.definitions.load import load

from .conftest import EXAMPLE, ROOT

PARTS = ("queues.yaml", "environments", "monitors", "dashboards", "scenarios")

NEW_QUEUE = """
  - name: exports
    class: short
    description: Customer data exports requested from the UI.
    slo_seconds: 600
    worker: {cluster: jobs, service: exports-worker, min_tasks: 1, max_tasks: 8}
    dlq: {name: exports-dlq, max_receive_count: 3, retention_seconds: 1209600}
    topics:
      - {name: jobs-exports}
    runbook: https://runbooks.example.com/jobs/exports
    owner: platform
"""

NEW_METRIC = """# yaml-language-server: $schema=../sync/definitions/schemas/metric.schema.json
# ECS CPU averaged over the service's tasks: the whole fleet is busy, not one hot task.
name: worker_cpu_average
title: workers busy on average
query: "avg(last_30m):avg:aws.ecs.service.cpuutilization{servicename:[[service]],[[aws_scope]]} > [[critical]]"
thresholds: {critical: 85, warning: 75}
priority: 4
notify: {alert: chat, warning: none}
message: |
  Workers of [[queue_name]] ([[service]] in [[cluster]]) average {{value}}% CPU (critical at [[critical]]%).
  Raise max_tasks ([[max_tasks]]) or the task CPU.
maintenance: live
"""

NEW_SCENARIO = """# yaml-language-server: $schema=../sync/definitions/schemas/scenario.schema.json
# From minute 60 every exports task runs hot; chat hears of it, and it closes once the fleet is scaled out.
name: exports fleet busy
queue: exports
environments: [prod]
incident_at: 60
duration: 240
series:
  - metric: aws.ecs.service.cpuutilization
    of: service
    shape: [{until: 60, value: 40}, {until: 150, value: 92}, {until: 240, value: 40}]
expect:
  - {monitor: worker_cpu_average, alerts: {within: 60}}
  - {monitor: worker_cpu_average, recovers: {within: 60, after: 150}}
"""


def _copy_example(target: Path) -> Path:
    target.mkdir()
    for part in PARTS:
        source = EXAMPLE / part
        (shutil.copytree if source.is_dir() else shutil.copy)(source, target / part)
    return target


def _replace(file: Path, pattern: str, replacement: str) -> None:
    text, count = re.subn(pattern, replacement, file.read_text())
    assert count, f"{file.name}: '{pattern}' not found: the edit no longer applies to the example"
    file.write_text(text)


def _example_tests(definitions: Path) -> subprocess.CompletedProcess[str]:
    """The tests marked `example`, run on these definitions in a child pytest with this checkout's code."""
    env = {**os.environ, "OBS_EXAMPLE": str(definitions), "PYTHONPATH": os.pathsep.join([str(ROOT), *sys.path])}
    # One worker: the suite around it already runs on every core.
    argv = [
        sys.executable,
        "-m",
        "pytest",
        "-q",
        "-n",
        "0",
        "-p",
        "no:cacheprovider",
        "-m",
        "example",
        *_marked_files(),
    ]
    return subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True, check=False, timeout=600)


def _marked_files() -> list[str]:
    """The test files that mark a test `example`: collecting only them saves the child importing the whole
    suite (a few seconds)."""
    files = [str(f) for f in sorted((ROOT / "tests").rglob("test_*.py")) if "pytest.mark.example" in f.read_text()]
    assert files, "no test is marked example"
    return files


def _passed(done: subprocess.CompletedProcess[str]) -> None:
    assert done.returncode == 0, done.stdout + done.stderr
    ran = re.search(r"\b(\d+) passed\b", done.stdout)
    assert ran and int(ran[1]) >= 10, done.stdout  # the example tests ran, not none of them


@pytest.mark.heavy(45)
def test_a_queue_and_a_metric_added_a_threshold_raised_and_a_metric_renamed_break_no_test(tmp_path: Path) -> None:
    # Four legitimate edits of the example at once, so that the example's tests run once on them (a run of
    # obs test over the whole example is the suite's longest test): each edit alone breaks nothing either.
    copy = _copy_example(tmp_path / "example")
    (copy / "queues.yaml").write_text((copy / "queues.yaml").read_text() + NEW_QUEUE)
    (copy / "monitors" / "worker_cpu_average.yaml").write_text(NEW_METRIC)
    (copy / "scenarios" / "exports-fleet-busy.yaml").write_text(NEW_SCENARIO)
    _replace(
        copy / "monitors" / "worker_cpu.yaml",
        r"thresholds: \{critical: 90, warning: 80\}",
        "thresholds: {critical: 94, warning: 85}",
    )
    (copy / "monitors" / "dlq_arrivals.yaml").rename(copy / "monitors" / "dlq_new_arrivals.yaml")
    for file in [copy / "queues.yaml", *(copy / "monitors").glob("*.yaml"), *(copy / "scenarios").glob("*.yaml")]:
        if re.search(r"\bdlq_arrivals\b", file.read_text()):
            _replace(file, r"\bdlq_arrivals\b", "dlq_new_arrivals")
    defs, shipped = load(copy), load(EXAMPLE)
    assert len(defs.queues) == len(shipped.queues) + 1 and len(defs.metrics) == len(shipped.metrics) + 1
    names = {m.name for m in defs.metrics}
    assert "dlq_new_arrivals" in names and "dlq_arrivals" not in names

    _passed(_example_tests(copy))
