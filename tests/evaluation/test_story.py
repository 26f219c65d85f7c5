"""`obs test` on stories the scenario language gained: mid-story starts, a downtime ended early, FIFO head-of-line
blocking, one task or zone of N, late and lost points, and the readings of open facts about the metrics."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from sync.cli.app import main
from tests.conftest import ROOT

FIXTURE = ROOT / "tests" / "fixtures" / "story"


def _defs(tmp_path: Path) -> Path:
    defs = tmp_path / "defs"
    shutil.copytree(FIXTURE, defs)
    return defs


def _edit(defs: Path, name: str, old: str, new: str) -> None:
    path = defs / "scenarios" / f"{name}.yaml"
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new))


def _edited(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], scenario: str, *edits: tuple[str, str]
) -> tuple[int, str]:
    """`obs test` of one scenario of a copy of the fixture, with these (old, new) edits of its file."""
    defs = _defs(tmp_path)
    for old, new in edits:
        _edit(defs, scenario, old, new)
    return _test(defs, scenario, capsys)


def _test(defs: Path, scenario: str, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    code = main(["--definitions", str(defs), "test", "--scenario", scenario])
    return code, capsys.readouterr().out


@pytest.mark.parametrize(
    "scenario",
    [
        "dlq-held-two-days",
        "fifo-group-blocked",
        "one-task-hot",
        "one-zone-hot",
        "maintenance-ended-early",
        "late-backfill",
    ],
)
def test_the_stories_pass(scenario: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, out = _test(FIXTURE, scenario, capsys)
    assert code == 0, out


def test_a_dlq_alerting_for_two_days_neither_alerts_again_nor_joins_a_resolved_incident(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out = _edited(tmp_path, capsys, "dlq-held-two-days", ("start: {alerting: [dlq], since: 2880}\n", ""))
    assert code == 1 and "dlq: never pages: paged 1 time (minutes: 0)" in out  # the old messages alert anew
    defs = _defs(tmp_path / "2")
    _edit(defs, "dlq-held-two-days", "incident_open: true\n", "")
    code, out = _test(defs, "dlq-held-two-days", capsys)
    # Two days of hourly renotifications: the next falls due at minute 0, and it pages a resolved incident.
    assert code == 1 and "dlq: never pages: paged 1 time (minutes: 0)" in out


def test_a_downtime_ended_early_notifies_then_and_not_at_its_planned_end(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out = _edited(tmp_path, capsys, "maintenance-ended-early", (", ended_at: 60}", "}"))
    assert code == 1 and "first page at minute 120" in out


def test_a_fifo_queue_is_watched_by_its_fifo_name(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out = _edited(tmp_path, capsys, "fifo-group-blocked", ("pages: {within: 20}", "pages: {within: 2}"))
    # The series carry the name the monitors read: the page comes, only later than this expectation allows.
    assert code == 1 and "queuename:prod-orders.fifo" in out and "first page at minute 41" in out


def test_a_fifo_only_metric_on_a_standard_queue_is_an_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    defs = _defs(tmp_path)
    queues = defs / "queues.yaml"
    queues.write_text(queues.read_text().replace("fifo: true", "fifo: false"))
    _edit(
        defs,
        "fifo-group-blocked",
        "  - metric: aws.sqs.number_of_messages_deleted\n",
        "  - metric: aws.sqs.approximate_number_of_groups_with_inflight_messages\n    of: queue\n"
        "    shape: [{until: 120, value: 1}]\n  - metric: aws.sqs.number_of_messages_deleted\n",
    )
    assert main(["--definitions", str(defs), "validate"]) == 1
    err = capsys.readouterr().err
    assert "scenarios/fifo-group-blocked.yaml:15: series[2].metric" in err
    assert "for FIFO queues only" in err and "fifo: true" in err


def test_without_tasks_the_mean_pages_too(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out = _edited(tmp_path, capsys, "one-task-hot", ("    tasks: {of: 6, affected: 1, others: 30}\n", ""))
    # The whole service at 100%: its mean crosses too, and chat hears of it.
    assert code == 1 and "FAIL  cpu_mean: notifies no one" in out


def test_points_that_never_arrive_never_page(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    lost = ("{until: 150, ramp: [20, 7160]}", "{until: 60, ramp: [20, 1820]}, {until: 150, gap: true}")
    code, out = _edited(tmp_path, capsys, "late-backfill", ("late: 30}", "late: never}"), lost)
    assert code == 1 and "age: pages within 45 min: no page after minute 30" in out


def test_per_second_counters_page_a_quiet_day(capsys: pytest.CaptureFixture[str]) -> None:
    code, out = _test(FIXTURE, "trickle", capsys)
    assert code == 1
    assert "FAIL  deletes_none: notifies no one" in out
    assert "under the reading 'window end open, earliest arrival, SQS counters per second'" in out


def test_missing_zero_task_counts_never_page_a_service_scaled_to_zero(capsys: pytest.CaptureFixture[str]) -> None:
    code, out = _test(FIXTURE, "scaled-to-zero", capsys)
    assert code == 1
    assert "under the reading 'window end open, earliest arrival, ECS zeros missing'" in out
    assert "U24" in out


def test_task_counts_keep_the_polled_delay_under_metric_streams(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    defs = _defs(tmp_path)
    # Zeros reported, the page comes at 55: the window's points are crawled (17 min), though the queue streams.
    _edit(defs, "scaled-to-zero", "{until: 120, value: 0}", "{until: 120, value: 0.5}")
    _edit(defs, "scaled-to-zero", "pages: {within: 45}", "pages: {within: 24}")
    code, out = _test(defs, "scaled-to-zero", capsys)
    assert code == 1 and "first page at minute 55, 25 min after minute 30 (1 min late; deadline 54)" in out


@pytest.mark.parametrize(
    ("name", "change", "where", "message"),
    [
        (
            "one-task-hot",
            ("of: service", "of: queue"),
            "one-task-hot.yaml:9: series[0].tasks",
            "a queue series has no tasks",
        ),
        (
            "one-task-hot",
            ("aws.ecs.service.cpuutilization\n", "aws.ecs.service.running\n"),
            "one-task-hot.yaml:9: series[0].tasks",
            "counts the service's tasks",
        ),
        (
            "late-backfill",
            ("{from: 30, until: 60, late: 30}", "{from: 30, until: 20}"),
            "late-backfill.yaml:10: series[0].gaps[0].until",
            "the gap ends (20) before it starts (30)",
        ),
        (
            "maintenance-ended-early",
            ("ended_at: 60", "ended_at: 130"),
            "maintenance-ended-early.yaml:7: downtimes[0].ended_at",
            "ended_at 130 is not within the downtime (0 to 120)",
        ),
        (
            "dlq-held-two-days",
            ("alerting: [dlq]", "alerting: [dlqq]"),
            "dlq-held-two-days.yaml:7: start.alerting[0]",
            "unknown monitor 'dlqq'",
        ),
        (
            "dlq-held-two-days",
            ("from: -2880", "from: 10"),
            "dlq-held-two-days.yaml:11: series[0].from",
            "greater than the maximum of 0",
        ),
    ],
)
def test_bad_stories_name_file_and_line(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    name: str,
    change: tuple[str, str],
    where: str,
    message: str,
) -> None:
    defs = _defs(tmp_path)
    _edit(defs, name, *change)
    assert main(["--definitions", str(defs), "validate"]) == 1
    err = capsys.readouterr().err
    assert where in err and message in err, err
    assert "Traceback" not in err


@pytest.mark.parametrize(("declared", "passes"), [("counts", True), ("per_second", False)])
def test_a_declared_unit_of_the_sqs_counters_is_the_only_reading_run(
    declared: str, passes: bool, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    defs = _defs(tmp_path)
    env = defs / "environments" / "prod.yaml"
    env.write_text(env.read_text().replace("region: us-east-1}", f"region: us-east-1, sqs_counters: {declared}}}"))
    code, out = _test(defs, "trickle", capsys)
    assert (code == 0) is passes, out
    assert ("SQS counters per second" in out) is not passes  # a failure names its reading; the declared one only
    assert "U4" not in out  # declared, not assumed


def test_fail_fast_stops_at_the_first_failing_run(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--definitions", str(FIXTURE), "test"]) == 1
    every = capsys.readouterr().out
    assert main(["--definitions", str(FIXTURE), "test", "--fail-fast"]) == 1
    first = capsys.readouterr().out
    ran = [line for line in first.splitlines() if line.startswith(("pass ", "FAIL "))]
    assert ran and ran[-1].startswith("FAIL ") and all(line.startswith("pass ") for line in ran[:-1])
    assert len(ran) < len([line for line in every.splitlines() if line.startswith(("pass ", "FAIL "))])
