"""Read the topic's delivery-status configuration and its Failure log group (I/O)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import datetime
from typing import TYPE_CHECKING

from botocore.exceptions import ClientError

from sync.aws.core.facts import LoggingStatus
from sync.aws.core.failures import Collector, Window
from sync.aws.core.target import TraceTarget
from sync.aws.reads.clients import Clients, aws_errors, error_code
from sync.errors import ObsError

if TYPE_CHECKING:
    from mypy_boto3_logs.type_defs import FilterLogEventsRequestTypeDef

Progress = Callable[[str], None]
EventSource = Callable[[Clients, str, datetime, datetime], Iterator[tuple[str, int | None]]]


def logging_status(clients: Clients, target: TraceTarget) -> LoggingStatus:
    with aws_errors(f"read the attributes of topic {target.topic_arn}", "sns:GetTopicAttributes"):
        try:
            attributes = clients.sns.get_topic_attributes(TopicArn=target.topic_arn)["Attributes"]
        except ClientError as exc:
            if error_code(exc) not in {"NotFound", "NotFoundException"}:
                raise
            raise ObsError.of(
                f"topic {target.topic_arn} does not exist",
                "check --topic, --env and the AWS account/region you are using",
            ) from exc
    return LoggingStatus(
        failure_role=attributes.get("SQSFailureFeedbackRoleArn", ""),
        success_role=attributes.get("SQSSuccessFeedbackRoleArn", ""),
        success_sample_rate=attributes.get("SQSSuccessFeedbackSampleRate", ""),
        failure_group_exists=group_exists(clients, target.failure_log_group),
    )


def group_exists(clients: Clients, group: str) -> bool:
    with aws_errors(f"look up log group {group}", "logs:DescribeLogGroups"):
        paginator = clients.logs.get_paginator("describe_log_groups")
        for page in paginator.paginate(logGroupNamePrefix=group):
            if any(g.get("logGroupName") == group for g in page.get("logGroups", [])):
                return True
    return False


def millis(stamp: datetime) -> int:
    return int(stamp.timestamp() * 1000)


def filter_events(
    clients: Clients,
    group: str,
    start: datetime,
    end: datetime,
    *,
    pattern: str = "",
    page_size: int | None = None,
    progress: Progress | None = None,
    missing: str = "",
) -> Iterator[tuple[str, int | None]]:
    """Every (message, timestamp ms) in the group and range, paging to the very end."""
    request: FilterLogEventsRequestTypeDef = {
        "logGroupName": group,
        "startTime": millis(start),
        "endTime": millis(end),
    }
    if pattern:
        request["filterPattern"] = pattern
    if page_size:
        request["limit"] = page_size
    seen_tokens: set[str] = set()
    pages = events = 0
    with aws_errors(f"read log group {group}", "logs:FilterLogEvents", missing):
        while True:
            page = clients.logs.filter_log_events(**request)
            pages += 1
            for event in page.get("events", []):
                events += 1
                yield event.get("message", ""), event.get("timestamp")
            if progress is not None:
                progress(f"{group}: {events} events, page {pages}")
            token = page.get("nextToken")
            # pages may be empty while a token remains; only a missing or repeated token ends the read
            if not token or token in seen_tokens:
                return
            seen_tokens.add(token)
            request["nextToken"] = token


def read_failures(
    clients: Clients,
    target: TraceTarget,
    window: Window,
    queues: frozenset[str],
    *,
    source: EventSource | None = None,
) -> Collector:
    """Every failure in the topic's Failure group for the window, deduplicated per message and queue."""
    collector = Collector(window=window, topic_arn=target.topic_arn, queues=queues)
    read = source or filter_events
    for message, stamp in read(clients, target.failure_log_group, window.start, window.read_end):
        collector.add(message, stamp)
    return collector
