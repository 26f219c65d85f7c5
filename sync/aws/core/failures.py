"""Fold parsed log events into one failure per message and destination (pure)."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta

from sync.aws.core.causes import RANK, Cause, classify
from sync.aws.core.events import Delivery, parse_event


@dataclass(frozen=True)
class Window:
    """The time range asked for, plus slack for SNS's log delivery lag."""

    start: datetime
    end: datetime
    slack: timedelta = timedelta(minutes=5)

    @property
    def read_end(self) -> datetime:
        return self.end + self.slack

    def keeps(self, delivery: Delivery) -> bool:
        """Given up on within the window, or logged in the slack for a message published in it."""
        logged = delivery.logged or delivery.published
        if logged is None:
            return True
        if self.start <= logged <= self.end:
            return True
        published = delivery.published
        return self.end < logged <= self.read_end and published is not None and published <= self.end


@dataclass(frozen=True)
class Failure:
    """One message SNS could not deliver to one queue."""

    message_id: str
    topic_arn: str
    destination: str
    queue: str
    published: datetime | None
    logged: datetime | None
    error_code: str
    error_message: str
    status_code: int | None
    attempts: int | None
    events: int
    cause: Cause
    raw: str
    unrecoverable: bool

    @property
    def retried(self) -> bool:
        """Whether SNS retried this message before it gave up: its events say so; the cause only guesses."""
        if self.attempts is not None and self.attempts > 1:
            return True
        if self.unrecoverable:  # "sqsRequestId": "Unrecoverable" on a first attempt: SNS gave up at once
            return False
        return self.cause.retried

    @property
    def sort_key(self) -> tuple[int, str, str, str]:
        moment = self.published or self.logged
        stamp = moment.isoformat() if moment else ""
        return (RANK[self.cause.key], self.queue, stamp, self.message_id)


@dataclass
class Tally:
    """What the read saw besides failures, so an empty result can be told from a blind one."""

    events: int = 0
    failed_events: int = 0
    successes: int = 0
    noise: int = 0
    outside_window: int = 0
    other_queue: int = 0
    other_topic: int = 0
    other_protocol: int = 0  # failures to Lambda, HTTP/S, Firehose... endpoints: counted, never shown
    malformed_sqs: int = 0  # failures to an SQS ARN obs cannot read: counted and reported, not hidden


@dataclass
class Collector:
    """Accumulates failures from raw log events; the same message logged twice counts once."""

    window: Window
    topic_arn: str
    queues: frozenset[str] = frozenset()  # queue names to keep; empty keeps all
    tally: Tally = field(default_factory=Tally)
    _found: dict[tuple[str, str], Failure] = field(default_factory=dict)

    def add(self, message: str, logged_ms: int | None) -> None:
        self.tally.events += 1
        delivery = parse_event(message, logged_ms)
        if delivery is None:
            self.tally.noise += 1
            return
        if not delivery.failed:
            self.tally.successes += 1
            return
        self.tally.failed_events += 1
        if delivery.topic_arn and self.topic_arn and delivery.topic_arn != self.topic_arn:
            self.tally.other_topic += 1
            return
        if delivery.malformed_sqs:
            self.tally.malformed_sqs += 1
            return
        if not delivery.to_sqs:
            self.tally.other_protocol += 1
            return
        if self.queues and delivery.queue_name not in self.queues:
            self.tally.other_queue += 1
            return
        if not self.window.keeps(delivery):
            self.tally.outside_window += 1
            return
        self._merge(delivery)

    def _merge(self, delivery: Delivery) -> None:
        ident = delivery.message_id or delivery.delivery_id or f"unidentified-{self.tally.failed_events}"
        key = (ident, delivery.destination)
        seen = self._found.get(key)
        if seen is None:
            self._found[key] = as_failure(delivery, ident)
            return
        attempts = max(filter(None, (seen.attempts, delivery.attempts)), default=None)
        latest = delivery if _later(delivery.logged, seen.logged) else None
        merged = replace(seen, attempts=attempts, events=seen.events + 1)
        if latest is not None:  # the last word on a message is its latest event
            fresh = as_failure(latest, ident)
            merged = replace(
                fresh, attempts=attempts, events=merged.events, published=seen.published or fresh.published
            )
        self._found[key] = merged

    def failures(self) -> tuple[Failure, ...]:
        return tuple(sorted(self._found.values(), key=lambda f: f.sort_key))


def as_failure(delivery: Delivery, ident: str) -> Failure:
    return Failure(
        message_id=ident,
        topic_arn=delivery.topic_arn,
        destination=delivery.destination,
        queue=delivery.queue_name,
        published=delivery.published,
        logged=delivery.logged,
        error_code=delivery.response.error_code,
        error_message=delivery.response.error_message,
        status_code=delivery.status_code,
        attempts=delivery.attempts,
        events=1,
        cause=classify(delivery),
        raw=delivery.response.raw,
        unrecoverable=delivery.response.unrecoverable,
    )


def _later(a: datetime | None, b: datetime | None) -> bool:
    return a is not None and (b is None or a > b)
