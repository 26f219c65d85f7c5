"""Pure: how a period of metric history is read from CloudWatch: in whole UTC days (a finished day never
changes, so it is read once and kept), 500 queries a call, each query one series at one-minute resolution."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

from sync.aws.core.datadog_names import Read
from sync.core.backtest.fetched import days, settled
from sync.errors import ObsError

__all__ = ["BATCH", "RETENTION", "batches", "cache_key", "check_period", "days", "query", "settled"]

# CloudWatch keeps 1-minute points 15 days (https://docs.aws.amazon.com/AmazonCloudWatch/latest/APIReference/API_GetMetricData.html):
# older periods come back in 5-minute points, which the one-minute model would misread.
RETENTION = timedelta(days=15)
BATCH = 500  # GetMetricData takes at most 500 queries a call
PERIOD_S = 60


def check_period(start: datetime, end: datetime, now: datetime) -> None:
    if end <= start:
        raise ObsError.of(f"the period ends ({_iso(end)}) before it starts ({_iso(start)})", "give --from before --to")
    if end > now + timedelta(minutes=1):
        raise ObsError.of(f"the period ends in the future ({_iso(end)})", "give --to now or earlier, or leave it out")
    oldest = now - RETENTION
    if start < oldest:
        raise ObsError.of(
            f"the period starts {_iso(start)}, before what CloudWatch keeps at 1-minute resolution "
            f"(15 days: from {_iso(oldest)})",
            "give a later --from, or fewer --days (at most 14 leaves room for the monitors' windows)",
        )


def _iso(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%MZ")


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
        "start": _iso(start),
        "end": _iso(end),
    }
    return hashlib.sha256(json.dumps(what, sort_keys=True).encode()).hexdigest()
