"""NumberOfNotificationsFailed for the topic, per minute where CloudWatch still has it: where failures cluster."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING

from sync.aws.core.metrics import FAILED, METRICS, MetricSummary, period_for
from sync.aws.core.target import TraceTarget
from sync.aws.reads.clients import Clients, aws_errors

if TYPE_CHECKING:
    from mypy_boto3_cloudwatch.type_defs import MetricDataQueryTypeDef


def failure_metrics(
    clients: Clients, target: TraceTarget, start: datetime, end: datetime, now: datetime
) -> MetricSummary:
    period = period_for(start, now)
    queries: list[MetricDataQueryTypeDef] = [
        {
            "Id": key,
            "MetricStat": {
                "Metric": {
                    "Namespace": "AWS/SNS",
                    "MetricName": name,
                    "Dimensions": [{"Name": "TopicName", "Value": target.topic_name}],
                },
                "Period": period,
                "Stat": "Sum",
            },
        }
        for key, name in sorted(METRICS.items())
    ]
    points: dict[str, dict[datetime, float]] = {key: {} for key in METRICS}
    with aws_errors(f"read {FAILED} for {target.topic_name}", "cloudwatch:GetMetricData"):
        paginator = clients.cloudwatch.get_paginator("get_metric_data")
        for page in paginator.paginate(
            MetricDataQueries=queries,
            StartTime=start,
            EndTime=end,
            ScanBy="TimestampAscending",
        ):
            for result in page.get("MetricDataResults", []):
                series = points.setdefault(result.get("Id", ""), {})
                for stamp, value in zip(result.get("Timestamps", []), result.get("Values", []), strict=False):
                    series[stamp] = series.get(stamp, 0.0) + value
    return MetricSummary(
        period_s=period,
        failed=_nonzero(points["failed"]),
        redriven=_nonzero(points["redriven"]),
        not_redriven=_nonzero(points["not_redriven"]),
        filtered_invalid=_nonzero(points["filtered_invalid"]),
    )


def _nonzero(series: dict[datetime, float]) -> tuple[tuple[datetime, float], ...]:
    return tuple(sorted((stamp, value) for stamp, value in series.items() if value))
