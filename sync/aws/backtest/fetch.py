"""Read the series the monitors read from CloudWatch GetMetricData: per region, in whole UTC days, 500 queries a
call, every page; finished days come from the cache when it has them."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

import boto3
from botocore.config import Config

from sync.aws.core import history
from sync.aws.core.datadog_names import Read
from sync.aws.reads.clients import aws_errors
from sync.core.backtest import fetched
from sync.core.backtest.fetched import Points, Store

if TYPE_CHECKING:
    from mypy_boto3_cloudwatch import CloudWatchClient

PERMISSION = "cloudwatch:GetMetricData"


Fetched = fetched.Fetched[Read]


# How the fetcher reaches AWS: a CloudWatch client and the account of the credentials, for a region.
Connector = Callable[[str], tuple["CloudWatchClient", str]]


def connect(region: str) -> tuple[CloudWatchClient, str]:
    """Clients from the standard credential chain (AWS_ENDPOINT_URL is honoured by boto3 itself)."""
    with aws_errors("connect to AWS"):
        session = boto3.session.Session(region_name=region)
        config = Config(retries={"mode": "adaptive", "total_max_attempts": 10}, user_agent_extra="obs-backtest")
        cloudwatch = session.client("cloudwatch", config=config)
    with aws_errors("identify the AWS account of the credentials", "sts:GetCallerIdentity"):
        account = str(session.client("sts", config=config).get_caller_identity()["Account"])
    return cloudwatch, account


def fetch(
    reads: Sequence[Read], start: datetime, end: datetime, now: datetime, cache: Store, connector: Connector = connect
) -> Fetched:
    history.check_period(start, end, now)
    found = Fetched()
    for region in sorted({r.region for r in reads}):
        cloudwatch, account = connector(region)
        mine = []
        for read in (r for r in reads if r.region == region):
            if read.account != account:
                found.unread[read] = (
                    f"the AWS credentials are for account {account}, the monitor reads account {read.account}"
                )
            else:
                mine.append(read)
                found.points[read] = {}
        for day_start, day_end in history.days(start, end):
            _day(cloudwatch, mine, day_start, day_end, history.settled(day_end, now), cache, found)
    return found


def _day(
    cloudwatch: CloudWatchClient,
    reads: Sequence[Read],
    start: datetime,
    end: datetime,
    keep: bool,
    cache: Store,
    found: Fetched,
) -> None:
    wanted = []
    for read in reads:
        kept = cache.get(history.cache_key(read, start, end)) if keep else None
        if kept is None:
            wanted.append(read)
        else:
            found.points[read].update(kept)
            found.cached += 1
    for batch in history.batches(wanted):
        day = _read(cloudwatch, batch, start, end, found)
        for read, points in zip(batch, day, strict=True):
            found.points[read].update(points)
            if keep:
                cache.put(history.cache_key(read, start, end), points)


def _read(
    cloudwatch: CloudWatchClient, batch: Sequence[Read], start: datetime, end: datetime, found: Fetched
) -> list[Points]:
    queries: list[Any] = [history.query(read, f"q{i}") for i, read in enumerate(batch)]
    out: list[Points] = [{} for _ in batch]
    where = batch[0].region
    with aws_errors(f"read CloudWatch metrics in {where}", PERMISSION):
        paginator = cloudwatch.get_paginator("get_metric_data")
        pages = paginator.paginate(MetricDataQueries=queries, StartTime=start, EndTime=end, ScanBy="TimestampAscending")
        for page in pages:
            found.calls += 1
            for result in page.get("MetricDataResults", []):
                series = out[int(result.get("Id", "q0")[1:])]
                for stamp, value in zip(result.get("Timestamps", []), result.get("Values", []), strict=False):
                    series[stamp.replace(second=0, microsecond=0)] = float(value)
                    found.datapoints += 1
    return out
