"""`obs backtest --source datadog` end to end against the fake Datadog's timeseries query: the history of
conftest.py (two planted incidents of the introduction queue), put into the fake as the AWS integration
would have sent it, pages at those incidents and nowhere else, exactly as the same series read from CloudWatch
do; finished days come from the cache; a key without the permission is told which it needs."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from sync.cli.app import main

from ..fakedd import FakeDatadog, Targeted
from .conftest import HOURS, INCIDENTS, QUEUE, START, _age, _put
from .test_backtest_cli import DEFS, _backtest

TIMESERIES = "/api/v2/query/timeseries"
SCOPE = {"region": "us-east-1"}
TOPIC = "prod-tenant-introduction"
WORKER = {"clustername": "prod-jobs", "servicename": "prod-introduction-worker"}
# Datadog metric, tags, CloudWatch namespace, metric and dimensions, and the value at each minute.
SERIES: tuple[tuple[str, dict[str, str], str, str, list[dict[str, str]], Callable[[int], float]], ...] = (
    (
        "aws.sqs.approximate_age_of_oldest_message", {"queuename": QUEUE},
        "AWS/SQS", "ApproximateAgeOfOldestMessage", [{"Name": "QueueName", "Value": QUEUE}], _age,
    ),
    (
        "aws.sqs.approximate_number_of_messages_visible", {"queuename": QUEUE},
        "AWS/SQS", "ApproximateNumberOfMessagesVisible", [{"Name": "QueueName", "Value": QUEUE}], lambda m: 0.0,
    ),
    (
        "aws.sqs.approximate_number_of_messages_visible", {"queuename": f"{QUEUE}-dlq"},
        "AWS/SQS", "ApproximateNumberOfMessagesVisible", [{"Name": "QueueName", "Value": f"{QUEUE}-dlq"}],
        lambda m: 0.0,
    ),
    (
        "aws.sns.number_of_messages_published", {"topicname": TOPIC},
        "AWS/SNS", "NumberOfMessagesPublished", [{"Name": "TopicName", "Value": TOPIC}], lambda m: 5.0,
    ),
    (
        "aws.sns.number_of_notifications_failed", {"topicname": TOPIC},
        "AWS/SNS", "NumberOfNotificationsFailed", [{"Name": "TopicName", "Value": TOPIC}], lambda m: 0.0,
    ),
    (
        "aws.ecs.service.cpuutilization.maximum", WORKER,
        "AWS/ECS", "CPUUtilization", [{"Name": k, "Value": v} for k, v in (("ClusterName", "prod-jobs"),
        ("ServiceName", "prod-introduction-worker"))], lambda m: 35.0,
    ),
    (
        "aws.ecs.service.memory_utilization.maximum", WORKER,
        "AWS/ECS", "MemoryUtilization", [{"Name": k, "Value": v} for k, v in (("ClusterName", "prod-jobs"),
        ("ServiceName", "prod-introduction-worker"))], lambda m: 40.0,
    ),
)  # fmt: skip


@pytest.fixture
def history(dd: FakeDatadog) -> FakeDatadog:
    """The introduction queue's history in Datadog; no task counts, as in the CloudWatch test."""
    for metric, tags, *_, value in SERIES:
        points = {int((START + timedelta(minutes=m)).timestamp()): value(m) for m in range(HOURS * 60)}
        dd.put_series(metric, {**tags, **SCOPE}, points)
    dd.reset_log()
    return dd


def _pages(found: dict[str, Any]) -> list[tuple[str, datetime]]:
    return [
        (monitor["key"], datetime.fromisoformat(n["at"].replace("Z", "+00:00")))
        for monitor in found["monitors"]
        for n in monitor["notifications"]
        if n["paged"]
    ]


def test_pages_at_the_planted_incidents_and_nowhere_else(
    history: FakeDatadog, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    code, out, err = _backtest(capsys, "--source", "datadog", "--cache", str(tmp_path / "cache"))
    assert code == 0, err
    found = json.loads(out)
    assert found["source"] == "Datadog"
    pages = sorted(_pages(found), key=lambda p: p[1])
    assert [key for key, _ in pages] == ["prod/introduction/age", "prod/introduction/age"]
    for (_, at), began in zip(pages, INCIDENTS, strict=True):
        assert began < at <= began + timedelta(minutes=10 + 17 + 2)
    age = next(m for m in found["monitors"] if m["key"] == "prod/introduction/age")
    assert [n["type"] for n in age["notifications"]] == ["warning", "alert", "warning", "recovery"] * 2
    why = dict((n["key"], n["why"]) for n in found["not_backtested"])
    assert why["prod/introduction/no_running_tasks"] == "no data for the period: aws.ecs.service.running"
    # One day of 10 hours and the 6 hours before: two UTC days, each one request of at most 16 series.
    asked = history.calls("POST", TIMESERIES)
    assert asked >= 2 and f"in {asked} calls" in err


def test_the_same_series_give_the_same_notifications_as_from_cloudwatch(
    history: FakeDatadog, aws: str, capsys: pytest.CaptureFixture[str]
) -> None:
    for *_, namespace, name, dimensions, value in SERIES:
        _put(namespace, name, dimensions, value)
    code, from_datadog, err = _backtest(capsys, "--source", "datadog", "--no-cache")
    assert code == 0, err
    code, from_cloudwatch, err = _backtest(capsys, "--no-cache")
    assert code == 0, err
    datadog, cloudwatch = json.loads(from_datadog), json.loads(from_cloudwatch)
    assert (datadog.pop("source"), cloudwatch.pop("source")) == ("Datadog", "CloudWatch")
    assert datadog == cloudwatch
    assert len(_pages(datadog)) == 2


def test_finished_days_come_from_the_cache(
    history: FakeDatadog, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    cache = str(tmp_path / "cache")
    code, first, _ = _backtest(capsys, "--source", "datadog", "--cache", cache)
    assert code == 0 and history.calls("POST", TIMESERIES) > 0
    history.reset_log()
    code, again, err = _backtest(capsys, "--source", "datadog", "--cache", cache)
    assert code == 0
    assert history.calls("POST", TIMESERIES) == 0
    assert "0 points in 0 calls" in err
    assert json.loads(again) == json.loads(first)


def test_a_key_without_the_permission_is_told_which_it_needs(
    history: FakeDatadog, capsys: pytest.CaptureFixture[str]
) -> None:
    history.faults.targeted.append(Targeted("POST", TIMESERIES, status=403, error="Forbidden"))
    code, out, err = _backtest(capsys, "--source", "datadog", "--no-cache")
    assert code == 1 and out == ""
    assert "refused the timeseries query: HTTP 403: Forbidden" in err
    assert "timeseries_query permission" in err
    assert history.api_key not in err and history.app_key not in err and "Traceback" not in err


def test_throttled_queries_wait_and_are_asked_again(history: FakeDatadog, capsys: pytest.CaptureFixture[str]) -> None:
    # The first two requests draw a 429; each waits for the window's reset (1 s here) and is asked again.
    history.faults.rate_period = 1.0
    history.faults.targeted.append(Targeted("POST", TIMESERIES, status=429, error="Rate limit exceeded", times=2))
    code, out, err = _backtest(capsys, "--source", "datadog", "--no-cache")
    assert code == 0, err
    assert len(_pages(json.loads(out))) == 2
    statuses = [r.status for r in history.log if r.path == TIMESERIES]
    assert statuses == [429, 429, 200, 200]  # two UTC days, one request each


def test_missing_keys_are_a_clear_error(
    dd: FakeDatadog, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("DD_APP_KEY")
    code = main(["--definitions", str(DEFS), "backtest", "--env", "prod", "--days", "1", "--source", "datadog"])
    err = capsys.readouterr().err
    assert code == 1
    assert "DD_APP_KEY is not set" in err and "--source cloudwatch" in err and dd.api_key not in err


def test_a_period_beyond_what_datadog_keeps_is_refused(dd: FakeDatadog, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["--definitions", str(DEFS), "backtest", "--env", "prod", "--days", "500", "--source", "datadog"]
    code = main([*argv, "--no-cache"])
    err = capsys.readouterr().err
    assert code == 1
    assert "before what Datadog keeps at 1-minute resolution (15 months" in err and "Traceback" not in err
    assert dd.calls("POST", TIMESERIES) == 0


def test_a_recording_from_datadog_is_the_recording_from_cloudwatch(
    history: FakeDatadog, aws: str, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """`obs test --record --source datadog` writes the scenario the same series in CloudWatch give."""
    for *_, namespace, name, dimensions, value in SERIES:
        _put(namespace, name, dimensions, value)
    window = ["--from", (INCIDENTS[0] - timedelta(minutes=30)).strftime("%Y-%m-%dT%H:%MZ")]
    window += ["--to", (INCIDENTS[0] + timedelta(minutes=90)).strftime("%Y-%m-%dT%H:%MZ")]
    argv = ["--definitions", str(DEFS), "test", "--record", "--env", "prod", "--queue", "introduction", *window]
    written = {}
    for source in ("datadog", "cloudwatch"):
        out = tmp_path / f"{source}.yaml"
        assert main([*argv, "--source", source, "--no-cache", "--out", str(out)]) == 0, capsys.readouterr().err
        written[source] = out.read_text(encoding="utf-8")
    assert written["datadog"].startswith("# Recorded by obs test --record from Datadog: queue introduction in prod,")
    assert written["datadog"].split("\n", 1)[1] == written["cloudwatch"].split("\n", 1)[1]
    assert "introduction/age, pages: {within:" in written["datadog"]
