"""Run one trace: preflight, metrics, the Failure log, live checks and correlation (the I/O shell)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from ..errors import ObsError
from .aws import Clients
from .checks import Check, judge
from .correlate import Published, lookup_published
from .dlq import DlqMessage, peek
from .events import queue_name_of
from .failures import Collector, Failure, Tally, Window
from .insights import insights_events
from .live import Subscription, queue_facts, subscriptions
from .logs import LoggingStatus, Progress, filter_events, logging_status, read_failures
from .metrics import MetricSummary, failure_metrics
from .preflight import logging_off, preflight
from .target import TraceTarget

INSIGHTS_AFTER = timedelta(hours=6)  # shorter windows page through FilterLogEvents quickly enough


@dataclass(frozen=True)
class Options:
    peek_dlq: bool = False  # opt-in: receiving touches the DLQ even though nothing is deleted
    dlq_limit: int = 1000
    metrics: bool = True
    checks: bool = True
    page_size: int | None = None  # FilterLogEvents limit; None lets AWS fill pages (10,000 events or 1 MB)
    engine: str = "auto"  # filter, insights, or auto: Insights for windows longer than INSIGHTS_AFTER


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


def trace(
    clients: Clients,
    target: TraceTarget,
    window: Window,
    *,
    queues: frozenset[str] = frozenset(),
    options: Options = Options(),
    progress: Progress | None = None,
) -> TraceResult:
    status = logging_status(clients, target)
    ready = preflight(status, target)
    notes = list(ready.notes)
    metrics = None
    if options.metrics:
        try:
            metrics = failure_metrics(clients, target, window.start, window.read_end)
        except ObsError as exc:
            notes.append(f"metrics not read: {exc}")
    tally = Tally()
    failures: tuple[Failure, ...] = ()
    if ready.read:
        collector = read_window(clients, target, window, queues, options, notes, progress)
        failures, tally = collector.failures(), collector.tally
    if not ready.logging_on and not failures:
        raise logging_off(target)
    subs = _subscriptions(clients, target, notes)
    checks = _checks(clients, target, failures) if options.checks else ()
    published: dict[str, Published] = {}
    if target.publishers and failures:
        try:
            published = lookup_published(clients, target.publishers, failures, progress)
        except ObsError as exc:
            notes.append(f"publisher log not read: {exc}")
    parked = _peek(clients, target, failures, subs, options=options, notes=notes) if options.peek_dlq else {}
    notes.extend(_loss_notes(target, failures, subs))
    if metrics is not None and not queues:
        notes.extend(metric_gap(metrics, len(failures)))
    findings = tuple(Finding(f, published.get(f.message_id), parked.get(f.message_id)) for f in failures)
    return TraceResult(
        target=target,
        window=window,
        queues=queues,
        logging=status,
        findings=findings,
        tally=tally,
        metrics=metrics,
        checks=checks,
        subscriptions=tuple(sorted(subs.values(), key=lambda s: s.queue_arn)),
        notes=tuple(notes),
    )


def engine_for(choice: str, window: Window) -> str:
    if choice != "auto":
        return choice
    return "insights" if window.read_end - window.start > INSIGHTS_AFTER else "filter"


def read_window(
    clients: Clients,
    target: TraceTarget,
    window: Window,
    queues: frozenset[str],
    options: Options,
    notes: list[str],
    progress: Progress | None,
) -> Collector:
    """The window's failures, by the engine asked for; auto falls back to FilterLogEvents if Insights fails."""

    def filtered(c: Clients, group: str, start: datetime, end: datetime) -> Iterator[tuple[str, int | None]]:
        return filter_events(c, group, start, end, page_size=options.page_size, progress=progress)

    def queried(c: Clients, group: str, start: datetime, end: datetime) -> Iterator[tuple[str, int | None]]:
        return insights_events(c, group, start, end, progress=progress)

    if engine_for(options.engine, window) == "filter":
        return read_failures(clients, target, window, queues, source=filtered)
    try:
        return read_failures(clients, target, window, queues, source=queried)
    except ObsError as exc:
        if options.engine == "insights":
            raise
        notes.append(f"Logs Insights unavailable, read with FilterLogEvents instead: {exc}")
        return read_failures(clients, target, window, queues, source=filtered)


def _subscriptions(clients: Clients, target: TraceTarget, notes: list[str]) -> dict[str, Subscription]:
    try:
        return subscriptions(clients, target)
    except ObsError as exc:
        notes.append(f"subscriptions not read: {exc}")
        return {}


def _checks(clients: Clients, target: TraceTarget, failures: tuple[Failure, ...]) -> tuple[Check, ...]:
    pairs = sorted({(f.cause.key, f.queue, f.destination, f.topic_arn or target.topic_arn) for f in failures})
    owners = {queue: _owner(arn) or target.account_id for _, queue, arn, _ in pairs}
    facts = {queue: queue_facts(clients, queue, owner) for queue, owner in sorted(owners.items())}
    found = [judge(cause, facts[queue], arn, topic) for cause, queue, arn, topic in pairs]
    return tuple(c for c in found if c is not None)


def metric_gap(metrics: MetricSummary, logged: int) -> list[str]:
    """Say so when CloudWatch counted more failures than the log names."""
    counted = int(metrics.total_failed)
    if counted <= logged:
        return []
    return [
        f"CloudWatch counted {counted} failed deliveries but the Failure log names {logged}: SNS may still be "
        "writing the log (trace again later, or widen --slack), or logging was turned on after some failed"
    ]


def _owner(queue_arn: str) -> str:
    """The account in a queue ARN: a topic may deliver to a queue in another account."""
    parts = queue_arn.split(":")
    return parts[4] if len(parts) == 6 and parts[0] == "arn" else ""


def _dlq_names(target: TraceTarget, queues: set[str], subs: dict[str, Subscription]) -> dict[str, str]:
    """queue name -> DLQ name: the definitions first, the live subscription otherwise."""
    declared = {d.queue: d.subscription_dlq for d in target.destinations if d.subscription_dlq}
    out: dict[str, str] = {}
    for queue in sorted(queues):
        name = declared.get(queue) or (queue_name_of(subs[queue].dlq_arn) if queue in subs else "")
        if name:
            out[queue] = name
    return out


def _peek(
    clients: Clients,
    target: TraceTarget,
    failures: tuple[Failure, ...],
    subs: dict[str, Subscription],
    *,
    options: Options,
    notes: list[str],
) -> dict[str, DlqMessage]:
    parked: dict[str, DlqMessage] = {}
    for dlq in sorted(set(_dlq_names(target, {f.queue for f in failures}, subs).values())):
        seen = peek(clients, dlq, target.account_id, options.dlq_limit)
        if seen.note:
            notes.append(seen.note)
        unmatched = 0
        for message in seen.messages:
            if message.sns_message_id:
                parked.setdefault(message.sns_message_id, message)
            else:
                unmatched += 1
        if unmatched:
            notes.append(f"DLQ {dlq}: {unmatched} raw-delivery messages carry no SNS message id to match")
    return parked


def _loss_notes(target: TraceTarget, failures: tuple[Failure, ...], subs: dict[str, Subscription]) -> list[str]:
    notes = []
    dlqs = _dlq_names(target, {f.queue for f in failures}, subs)
    for queue in sorted({f.queue for f in failures if not f.cause.retried}):
        if queue not in dlqs:
            notes.append(
                f"the subscription to {queue} has no DLQ: its failed messages are gone; republish them "
                "from the publisher and set a RedrivePolicy on the subscription"
            )
    return notes
