"""What one trace found, as plain data for the report (pure)."""

from __future__ import annotations

from dataclasses import dataclass, field

from sync.aws.core.checks import Check
from sync.aws.core.dlq import DlqMessage
from sync.aws.core.facts import LoggingStatus, Subscription
from sync.aws.core.failures import Failure, Tally, Window
from sync.aws.core.metrics import MetricSummary
from sync.aws.core.publisher import Published
from sync.aws.core.target import TraceTarget


@dataclass(frozen=True)
class Finding:
    """A failed message with whatever the publisher log and the DLQ add."""

    failure: Failure
    published: Published | None = None
    parked: DlqMessage | None = None


@dataclass(frozen=True)
class TraceResult:
    target: TraceTarget
    window: Window
    queues: frozenset[str]
    logging: LoggingStatus
    findings: tuple[Finding, ...]
    tally: Tally
    metrics: MetricSummary | None
    checks: tuple[Check, ...]
    subscriptions: tuple[Subscription, ...]
    notes: tuple[str, ...] = field(default=())
