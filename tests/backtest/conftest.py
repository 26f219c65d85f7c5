"""A moto server on 127.0.0.1 for the backtest tests (CloudWatch and STS), reset before each test, and the AWS
environment pointed at it alone; and a history of the fixture's introduction queue with two planted incidents."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import boto3
import pytest

from tests import moto

NOW = datetime.now(UTC).replace(second=0, microsecond=0)
START = (NOW - timedelta(days=2)).replace(hour=0, minute=0)
HOURS = 7
INCIDENTS = (START + timedelta(hours=1), START + timedelta(hours=4))  # 40 minutes each
QUEUE = "prod-introduction"
SERVICE = [{"Name": "ClusterName", "Value": "prod-jobs"}, {"Name": "ServiceName", "Value": "prod-introduction-worker"}]


def _put(namespace: str, name: str, dimensions: list[dict[str, str]], value: Any) -> None:
    client = boto3.client("cloudwatch", region_name="us-east-1")
    data = [
        {"MetricName": name, "Dimensions": dimensions, "Timestamp": START + timedelta(minutes=m), "Value": value(m)}
        for m in range(HOURS * 60)
    ]
    for first in range(0, len(data), 1000):
        client.put_metric_data(Namespace=namespace, MetricData=data[first : first + 1000])  # type: ignore[arg-type]


def _age(minute: int) -> float:
    at = START + timedelta(minutes=minute)
    stuck = any(begin <= at < begin + timedelta(minutes=40) for begin in INCIDENTS)
    return 20_000.0 if stuck else 30.0


@pytest.fixture
def history(aws: str) -> None:
    """The introduction queue's history; no Container Insights, so no task counts."""
    _put("AWS/SQS", "ApproximateAgeOfOldestMessage", [{"Name": "QueueName", "Value": QUEUE}], _age)
    _put("AWS/SQS", "ApproximateNumberOfMessagesVisible", [{"Name": "QueueName", "Value": QUEUE}], lambda m: 0.0)
    _put(
        "AWS/SQS", "ApproximateNumberOfMessagesVisible", [{"Name": "QueueName", "Value": f"{QUEUE}-dlq"}], lambda m: 0.0
    )
    _put(
        "AWS/SNS",
        "NumberOfMessagesPublished",
        [{"Name": "TopicName", "Value": "prod-tenant-introduction"}],
        lambda m: 5.0,
    )
    _put(
        "AWS/SNS",
        "NumberOfNotificationsFailed",
        [{"Name": "TopicName", "Value": "prod-tenant-introduction"}],
        lambda m: 0.0,
    )
    _put("AWS/ECS", "CPUUtilization", SERVICE, lambda m: 35.0)
    _put("AWS/ECS", "MemoryUtilization", SERVICE, lambda m: 40.0)


@pytest.fixture(scope="session")
def moto_server() -> Iterator[str]:
    yield from moto.serving()


@pytest.fixture
def aws(moto_server: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> str:
    """The endpoint, with nothing of the developer's AWS set-up in reach."""
    moto.isolated(moto_server, monkeypatch, tmp_path)
    return moto_server
