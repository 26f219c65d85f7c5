"""Pure: how a period of metric history is read from CloudWatch: in whole UTC days (a finished day never
changes, so it is read once and kept), 500 queries a call, each query one series at one-minute resolution."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator, Sequence
from datetime import datetime, timedelta
from typing import Any

from sync.aws.core.datadog_names import Read
from sync.core.backtest import fetched
from sync.core.backtest.fetched import days, settled

__all__ = ["BATCH", "RETENTION", "batches", "cache_key", "check_period", "days", "query", "settled"]

# CloudWatch keeps 1-minute points 15 days (https://docs.aws.amazon.com/AmazonCloudWatch/latest/APIReference/API_GetMetricData.html):
# older periods come back in 5-minute points, which the one-minute model would misread.
RETENTION = timedelta(days=15)
BATCH = 500  # GetMetricData takes at most 500 queries a call
PERIOD_S = 60


def check_period(start: datetime, end: datetime, now: datetime) -> None:
    fetched.check_period(start, end, now, RETENTION, "CloudWatch", "15 days; at most 14 leaves room for the warm-up")


def batches(reads: Sequence[Read]) -> Iterator[Sequence[Read]]:
    for first in range(0, len(reads), BATCH):
        yield reads[first : first + BATCH]


def query(read: Read, qid: str) -> dict[str, Any]:
    """One GetMetricData query (MetricDataQuery): the series at one-minute periods."""
    return {
        "Id": qid,
        "MetricStat": {
            "Metric": {
                "Namespace": read.source.namespace,
                "MetricName": read.source.metric,
                "Dimensions": [{"Name": name, "Value": value} for name, value in read.dimensions],
            },
            "Period": PERIOD_S,
            "Stat": read.source.statistic,
        },
        "ReturnData": True,
    }


def cache_key(read: Read, start: datetime, end: datetime) -> str:
    """A hash of what was asked: the query, where, and the period."""
    what = {
        "query": query(read, "q"),
        "region": read.region,
        "account": read.account,
        "start": fetched.minute(start),
        "end": fetched.minute(end),
    }
    return hashlib.sha256(json.dumps(what, sort_keys=True).encode()).hexdigest()
