"""What to trace: the topic, its known destinations and publisher logs, and the time window (pure)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timedelta

from sync.aws.core.events import parse_time
from sync.core import durations
from sync.definitions.model import PublisherLog
from sync.errors import ObsError
from sync.expand import placement

_ARN = re.compile(rf"^arn:{placement.ARN_PARTITION}:sns:[a-z0-9-]+:\d{{12}}:[A-Za-z0-9_.-]{{1,256}}$")
MAX_DURATION = timedelta(days=366)


@dataclass(frozen=True)
class Destination:
    """A queue the topic delivers to, as declared in the definitions."""

    queue: str  # physical SQS name
    queue_arn: str
    logical: str = ""
    subscription_dlq: str | None = None  # physical SQS name of the subscription's DLQ


@dataclass(frozen=True)
class TraceTarget:
    """A topic to trace, with what the definitions know about it."""

    topic_arn: str
    destinations: tuple[Destination, ...] = ()
    publishers: tuple[PublisherLog, ...] = ()

    @property
    def partition(self) -> str:
        return self.topic_arn.split(":")[1]

    @property
    def region(self) -> str:
        return self.topic_arn.split(":")[3]

    @property
    def account_id(self) -> str:
        return self.topic_arn.split(":")[4]

    @property
    def topic_name(self) -> str:
        return self.topic_arn.split(":", 5)[5]

    @property
    def success_log_group(self) -> str:
        return f"sns/{self.region}/{self.account_id}/{self.topic_name}"

    @property
    def failure_log_group(self) -> str:
        return f"{self.success_log_group}/Failure"

    def queue_arn(self, queue: str) -> str:
        return placement.arn("sqs", self.region, self.account_id, queue)


def is_topic_arn(text: str) -> bool:
    return text.startswith("arn:")


def target_from_arn(arn: str) -> TraceTarget:
    if not _ARN.match(arn.strip()):
        raise ObsError.of(
            f"--topic {arn!r} is not an SNS topic ARN",
            "pass arn:aws:sns:<region>:<12-digit account>:<topic name>, or a topic name with --env",
        )
    return TraceTarget(topic_arn=arn.strip())


def parse_duration(text: str, flag: str = "--since", *, allow_zero: bool = False) -> timedelta:
    """'90s', '15m', '2h', '1d', '1h30m' as a timedelta, at most MAX_DURATION."""
    seconds = durations.seconds(text)
    if seconds is None:
        raise ObsError.of(f"{flag} {text!r} is not a duration", "write it like 30m, 2h, 1d or 1h30m")
    if seconds < 0 or seconds > MAX_DURATION.total_seconds():
        raise ObsError.of(
            f"{flag} {text!r} is longer than {MAX_DURATION.days} days",
            f"give at most {MAX_DURATION.days}d, or use --start/--end for an older window",
        )
    if seconds <= 0 and not allow_zero:
        raise ObsError.of(f"{flag} {text!r} is empty", "give a positive duration such as 1h")
    return timedelta(seconds=seconds)


def parse_instant(text: str, flag: str) -> datetime:
    """An ISO-8601 time (UTC when no zone is given) or epoch seconds/milliseconds."""
    stamp = parse_time(text)
    if stamp is None:
        raise ObsError.of(
            f"{flag} {text!r} is not a time",
            "use ISO-8601 UTC such as 2026-11-30T10:15:00Z, or epoch seconds",
        )
    return stamp


def window_bounds(since: str | None, start: str | None, end: str | None, now: datetime) -> tuple[datetime, datetime]:
    """The [start, end] asked for on the command line; the last hour by default."""
    if since and (start or end):
        raise ObsError.of("--since cannot be combined with --start/--end", "use either --since or --start/--end")
    if since:
        return now - parse_duration(since), now
    if end and not start:
        raise ObsError.of("--end needs --start", "add --start, or use --since")
    lo = parse_instant(start, "--start") if start else now - timedelta(hours=1)
    hi = parse_instant(end, "--end") if end else now
    if hi <= lo:
        raise ObsError.of(f"--end {iso(hi)} is not after --start {iso(lo)}", "swap them or widen the window")
    return lo, hi


def iso(stamp: datetime | None) -> str:
    """UTC ISO-8601 with milliseconds and a Z, or an empty string."""
    if stamp is None:
        return ""
    return stamp.strftime("%Y-%m-%dT%H:%M:%S.") + f"{stamp.microsecond // 1000:03d}Z"
