"""The fetcher against moto in server mode: points written with PutMetricData come back per minute, in batches
of 500 queries, and finished days come from the cache."""

from __future__ import annotations

import urllib.request
from datetime import UTC, datetime, timedelta
from pathlib import Path

import boto3
import pytest

from sync.aws.backtest.cache import Cache
from sync.aws.backtest.fetch import fetch
from sync.aws.core.datadog_names import Read, read_for
from sync.errors import ObsError

MOTO_ACCOUNT = "123456789012"
# Yesterday at noon, whatever the time of day the tests run: a fetch up to it ends a day, and one of three hours
# before it, within one day (a fetch is split per UTC day, and a day finished just now is not settled yet).
NOW = datetime.now(UTC).replace(hour=12, minute=0, second=0, microsecond=0) - timedelta(days=1)
START = (NOW - timedelta(days=2)).replace(hour=0, minute=0)


def _read(queue: str, metric: str = "aws.sqs.approximate_age_of_oldest_message") -> Read:
    read = read_for(metric, (("queuename", queue),), "us-east-1", MOTO_ACCOUNT)
    assert isinstance(read, Read)
    return read


def _put(queue: str, name: str, points: dict[datetime, float]) -> None:
    client = boto3.client("cloudwatch", region_name="us-east-1")
    data = [
        {"MetricName": name, "Dimensions": [{"Name": "QueueName", "Value": queue}], "Timestamp": at, "Value": value}
        for at, value in points.items()
    ]
    for first in range(0, len(data), 1000):
        client.put_metric_data(Namespace="AWS/SQS", MetricData=data[first : first + 1000])  # type: ignore[arg-type]


def test_points_come_back_per_minute_and_finished_days_are_kept(aws: str, tmp_path: Path) -> None:
    written = {START + timedelta(minutes=m): float(m % 7) for m in range(0, 36 * 60, 3)}  # a day and a half
    _put("prod-a", "ApproximateAgeOfOldestMessage", written)
    _put("prod-b", "ApproximateAgeOfOldestMessage", {START + timedelta(hours=1): 5.0})
    reads = [_read("prod-a"), _read("prod-b")]
    cache = Cache(tmp_path / "cache")
    first = fetch(reads, START, NOW, NOW, cache)
    assert first.points[reads[0]] == written
    assert first.points[reads[1]] == {START + timedelta(hours=1): 5.0}
    assert first.calls >= 3 and first.cached == 0  # one call a day at least, three days
    # The two finished days are kept: read again with nothing in CloudWatch, they come from the cache.
    urllib_reset(aws)
    again = fetch(reads, START, NOW, NOW, cache)
    assert again.cached == 4
    assert again.points[reads[0]] == {at: v for at, v in written.items() if at < NOW.replace(hour=0, minute=0)}
    # --no-cache reads CloudWatch only
    assert fetch(reads, START, NOW, NOW, Cache(None)).points[reads[0]] == {}


def urllib_reset(endpoint: str) -> None:
    with urllib.request.urlopen(urllib.request.Request(f"{endpoint}/moto-api/reset", method="POST")) as response:
        assert response.status == 200


def test_more_than_500_series_take_more_than_one_call(aws: str, tmp_path: Path) -> None:
    # Ten minutes read: moto answers each query by scanning every point for every minute asked.
    at = NOW - timedelta(minutes=5)
    queues = [f"q{i:03d}" for i in range(501)]
    client = boto3.client("cloudwatch", region_name="us-east-1")
    for first in range(0, len(queues), 500):
        client.put_metric_data(
            Namespace="AWS/SQS",
            MetricData=[
                {
                    "MetricName": "NumberOfMessagesDeleted",
                    "Dimensions": [{"Name": "QueueName", "Value": q}],
                    "Timestamp": at,
                    "Value": float(i),
                }
                for i, q in enumerate(queues[first : first + 500], start=first)
            ],
        )
    reads = [_read(q, "aws.sqs.number_of_messages_deleted") for q in queues]
    found = fetch(reads, NOW - timedelta(minutes=10), NOW, NOW, Cache(None))
    assert found.calls == 2
    assert [found.points[r] for r in reads[499:]] == [{at: 499.0}, {at: 500.0}]


def test_another_account_is_not_read(aws: str) -> None:
    read = read_for("aws.sqs.number_of_messages_deleted", (("queuename", "q"),), "us-east-1", "111111111111")
    assert isinstance(read, Read)
    found = fetch([read], NOW - timedelta(hours=1), NOW, NOW, Cache(None))
    assert (
        found.unread[read]
        == f"the AWS credentials are for account {MOTO_ACCOUNT}, the monitor reads account 111111111111"
    )


def test_a_period_beyond_the_one_minute_retention_is_refused(aws: str) -> None:
    with pytest.raises(ObsError, match="15 days"):
        fetch([_read("q")], NOW - timedelta(days=16), NOW, NOW, Cache(None))


def test_no_credentials_is_a_clear_error(aws: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("AWS_ACCESS_KEY_ID")
    monkeypatch.delenv("AWS_SECRET_ACCESS_KEY")
    with pytest.raises(ObsError, match="no usable AWS credentials"):
        fetch([_read("q")], NOW - timedelta(hours=1), NOW, NOW, Cache(None))
