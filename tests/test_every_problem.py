"""Checks that look at many items (names a composite combines, tokens of a text, segments of a series,
monitors of an expectation, windows of a preview) report every problem of one run, not the first only."""

from __future__ import annotations

import shutil
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from sync.cli.app import main
from sync.definitions import maintenance
from sync.definitions.load import load
from sync.errors import ObsError
from tests.conftest import JOBS


@pytest.fixture
def defs(tmp_path: Path) -> Path:
    folder = tmp_path / "defs"
    shutil.copytree(JOBS, folder)
    return folder


def problems_of(folder: Path, capsys: pytest.CaptureFixture[str]) -> list[str]:
    capsys.readouterr()
    assert main(["--definitions", str(folder), "validate"]) == 1
    *lines, count = capsys.readouterr().err.removeprefix("error: ").splitlines()
    found = [line for line in lines if not line.startswith("note: ")]
    assert count.startswith(f"{len(found)} problem")
    return found


def edit(path: Path, find: str, replace: str) -> None:
    text = path.read_text()
    assert find in text
    path.write_text(text.replace(find, replace, 1))


def test_every_wrong_metric_a_composite_combines(defs: Path, capsys: pytest.CaptureFixture[str]) -> None:
    edit(
        defs / "monitors" / "consumers_stuck.yaml",
        'composite: "[[metric:messages_waiting]] && [[metric:deletes_none]]"',
        'composite: "[[metric:consumers_stuck]] || [[metric:backlog_draining]] || [[metric:delivery_failures]]"',
    )
    found = problems_of(defs, capsys)
    assert [line.split(": ", 2)[2] for line in found] == [
        "composite 'consumers_stuck' refers to itself: combine other metrics",
        "metric 'backlog_draining' is itself a composite; Datadog cannot nest composites: "
        "combine the metrics of 'backlog_draining' here directly",
        "metric 'delivery_failures' makes one monitor per topic, not one per queue: "
        "combine metrics made once per queue",
    ]


def test_every_unknown_token_of_a_text(defs: Path, capsys: pytest.CaptureFixture[str]) -> None:
    edit(defs / "monitors" / "consumers_stuck.yaml", "  [[queue_name]] has had", "  [[queue_nmae]] in [[evn]] has had")
    found = problems_of(defs, capsys)
    assert [line.split(": ", 2)[2] for line in found] == [
        "unknown template token [[queue_nmae]]: did you mean [[queue_name]]?",
        "unknown template token [[evn]]: did you mean [[env]]?",
    ]


SCENARIO = """\
name: a stall
queue: critical
incident_at: 60
duration: 240
series:
  - metric: aws.sqs.approximate_age_of_oldest_message
    of: queue
    shape: [{until: 60, value: 1}, {until: 50, value: 2}, {until: 40, value: 3}, {until: 240, value: 4}]
  - metric: aws.sqs.approximate_number_of_messages_visible
    of: dlq
    topic: jobs-critical
    shape: [{until: 240, value: 0}]
expect:
  - {monitor: [dpeth, aeg], pages: never}
"""


def test_every_problem_of_a_series_and_an_expectation(defs: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (defs / "scenarios").mkdir()
    (defs / "scenarios" / "stall.yaml").write_text(SCENARIO)
    found = problems_of(defs, capsys)
    assert [line.split(": ", 1)[1].split(":")[0] for line in found] == [
        "series[0].shape[1].until",
        "series[0].shape[2].until",
        "series[1].topic",
        "expect[0].monitor[0]",
        "expect[0].monitor[1]",
    ]
    assert "until 40 does not come after the previous segment's end (50)" in found[1]
    assert "unknown monitor 'aeg': did you mean 'age'?" in found[4]


def test_every_new_window_that_is_already_over(defs: Path) -> None:
    ended = datetime.now(UTC).replace(microsecond=0) - timedelta(days=2)
    end = ended + timedelta(hours=1)
    schedule = f'{{start: "{ended:%Y-%m-%dT%H:%M:%SZ}", end: "{end:%Y-%m-%dT%H:%M:%SZ}"}}'
    staging = defs / "environments" / "staging.yaml"
    staging.write_text(
        staging.read_text()
        + f"maintenance:\n  - name: upgrade\n    schedule: {schedule}\n  - name: reindex\n    schedule: {schedule}\n"
    )
    with pytest.raises(ObsError) as raised:
        maintenance.refuse_new_and_over(load(defs), {})
    assert [p.what.split(" is new")[0] for p in raised.value.problems] == [
        "the one-time window 'upgrade'",
        "the one-time window 'reindex'",
    ]
