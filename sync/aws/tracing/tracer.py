"""Run one trace: preflight, metrics, the Failure log, live checks and correlation (the I/O shell)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from sync.aws.core.checks import CHECKABLE, Check, judge
from sync.aws.core.coverage import metric_gap, metric_losses, recent_note, retried_note, silent_logging, unshown_notes
from sync.aws.core.facts import Listed, LoggingStatus
from sync.aws.core.failures import Collector, Failure, Tally, Window
from sync.aws.core.findings import ERROR
from sync.aws.core.metrics import MetricSummary
from sync.aws.core.preflight import logging_off, preflight
from sync.aws.core.publisher import Published
from sync.aws.core.redrive import loss_notes, redrives
from sync.aws.core.target import TraceTarget
from sync.aws.core.topics import ROLE_READS, TopicUse, check_role
from sync.aws.core.trace import Finding, TraceResult
from sync.aws.reads.clients import Clients, caller_account
from sync.aws.reads.dlq import peek_dlqs
from sync.aws.reads.facts import list_subscriptions, queue_facts, subscriptions
from sync.aws.reads.insights import insights_events
from sync.aws.reads.logs import Progress, filter_events, logging_status, read_failures
from sync.aws.reads.metrics import failure_metrics
from sync.aws.reads.publisher import lookup_published
from sync.aws.reads.survey import read_role
from sync.errors import ObsError

INSIGHTS_AFTER = timedelta(hours=6)  # shorter windows page through FilterLogEvents quickly enough


@dataclass(frozen=True)
class Options:
    peek_dlq: bool = False  # opt-in: receiving touches the DLQ even though nothing is deleted
    dlq_limit: int = 1000
    metrics: bool = True
    engine: str = "auto"  # filter, insights, or auto: Insights for windows longer than INSIGHTS_AFTER


@dataclass(frozen=True)
class _Log:
    """What the first half of a trace read: the logging setup, the metrics and the window's failures."""

    status: LoggingStatus
    metrics: MetricSummary | None
    failures: tuple[Failure, ...]
    tally: Tally
    notes: list[str]


def trace(
    clients: Clients,
    target: TraceTarget,
    window: Window,
    *,
    queues: frozenset[str] = frozenset(),
    options: Options = Options(),
    progress: Progress | None = None,
    now: datetime | None = None,
) -> TraceResult:
    now = now or datetime.now(UTC)
    caller = caller_account(clients)
    if caller != target.account_id:
        raise elsewhere(target, caller)
    log = read_log(clients, target, window, queues, options, progress, now)
    status, metrics, failures, notes = log.status, log.metrics, log.failures, log.notes
    if not failures and status.failure_role and metrics is None:
        vouch_for_role(clients, target, status.failure_role, caller)  # nothing else can tell a blind log
    listed, unlisted = _listed(clients, target) if failures or _silent(status, metrics, log.tally) else ((), "")
    broken = silent_logging(target, status, metrics, log.tally, any(s.protocol != "sqs" for s in listed))
    if broken is not None:
        raise broken
    notes += recent_note(window, now) + retried_note(failures)
    notes += unshown_notes(log.tally, target.failure_log_group)
    wanted = frozenset(f.destination for f in failures)
    subs = subscriptions(clients, listed, wanted) if failures and not unlisted else {}
    if unlisted:
        notes.append(f"subscriptions not read: {unlisted}")
    checks = _checks(clients, target, failures)
    published = _published(clients, target, failures, notes, progress)
    dlqs = redrives(target, wanted, subs, "the topic's subscriptions could not be listed" if unlisted else "")
    parked = peek_dlqs(clients, dlqs, options.dlq_limit, notes) if options.peek_dlq else {}
    notes.extend(loss_notes(failures, dlqs))
    if metrics is not None:
        notes.extend(metric_losses(metrics))
    if metrics is not None and not queues:
        notes.extend(metric_gap(metrics, len(failures), log.tally.other_protocol + log.tally.malformed_sqs))
    return TraceResult(
        target=target,
        window=window,
        queues=queues,
        logging=status,
        findings=tuple(Finding(f, published.get(f.message_id), parked.get(f.message_id)) for f in failures),
        tally=log.tally,
        metrics=metrics,
        checks=checks,
        subscriptions=tuple(sorted(subs.values(), key=lambda s: s.queue_arn)),
        notes=tuple(notes),
    )


def read_log(
    clients: Clients,
    target: TraceTarget,
    window: Window,
    queues: frozenset[str],
    options: Options,
    progress: Progress | None,
    now: datetime,
) -> _Log:
    """Whether the topic logs failures, its failure metrics, and the failures its log holds for the window."""
    status = logging_status(clients, target)
    ready = preflight(status, target)
    notes = list(ready.notes)
    metrics = None
    if options.metrics:
        try:
            metrics = failure_metrics(clients, target, window.start, window.read_end, now)
        except ObsError as exc:
            notes.append(f"metrics not read: {exc}")
    tally = Tally()
    failures: tuple[Failure, ...] = ()
    if ready.read:
        collector = read_window(clients, target, window, queues, options, notes, progress)
        failures, tally = collector.failures(), collector.tally
    if not ready.logging_on and not failures:
        raise logging_off(target, group_exists=status.failure_group_exists)
    return _Log(status, metrics, failures, tally, notes)


def _published(
    clients: Clients,
    target: TraceTarget,
    failures: tuple[Failure, ...],
    notes: list[str],
    progress: Progress | None,
) -> dict[str, Published]:
    """What the publishers logged about the failed messages; a log that cannot be read becomes a note."""
    if not target.publishers or not failures:
        return {}
    try:
        return lookup_published(clients, target.publishers, failures, progress)
    except ObsError as exc:
        notes.append(f"publisher log not read: {exc}")
        return {}


def elsewhere(target: TraceTarget, caller: str) -> ObsError:
    """SNS logs in the topic owner's account: from another account every failure is invisible."""
    account = target.account_id
    return ObsError.of(
        f"cannot trace {target.topic_arn} with credentials of account {caller}: SNS writes its delivery-status "
        f"logs in the topic owner's account {account}, so from here no failure can be seen and 'no failures' "
        "would mean nothing",
        f"run obs trace with credentials of account {account} (its AWS_PROFILE, or a read-only role there: "
        f"aws sts assume-role --role-arn arn:{target.partition}:iam::{account}:role/<read-only role> "
        "--role-session-name obs-trace)",
    )


def vouch_for_role(clients: Clients, target: TraceTarget, role_arn: str, caller: str) -> None:
    """Without metrics, an empty log proves nothing unless the logging role works: judge it as obs audit does."""
    role = read_role(clients, role_arn, caller)
    found = check_role(TopicUse(target.topic_arn), role)
    if role.exists is None:
        raise ObsError.of(
            f"cannot tell whether {target.topic_arn} had no failures: the metrics were not read and the logging "
            f"role {role_arn} could not be checked ({role.unread}), so an empty log may only mean SNS cannot write it",
            f"trace without --no-metrics, or grant the caller {', '.join(ROLE_READS)}",
        )
    broken = [f for f in found if f.severity == ERROR]
    if broken:
        raise ObsError.of(
            f"cannot trust 'no failures' for {target.topic_arn}: SNS cannot write its delivery-status log through "
            f"{role_arn} ({'; '.join(f.live for f in broken)}), so failed deliveries go unrecorded",
            "; ".join(f.fix for f in broken),
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
        return filter_events(c, group, start, end, progress=progress)

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


def _silent(status: LoggingStatus, metrics: MetricSummary | None, tally: Tally) -> bool:
    """Logging on, the metric counts failures, the log has none: worth listing the topic's protocols."""
    return bool(status.failure_role) and metrics is not None and metrics.total_failed > 0 and not tally.failed_events


def _listed(clients: Clients, target: TraceTarget) -> tuple[tuple[Listed, ...], str]:
    """The topic's subscriptions, or why they could not be listed."""
    try:
        return list_subscriptions(clients, target), ""
    except ObsError as exc:
        return (), str(exc)


def _checks(clients: Clients, target: TraceTarget, failures: tuple[Failure, ...]) -> tuple[Check, ...]:
    """Live facts read once per queue ARN, in the queue's own region and account."""
    pairs = sorted(
        {(f.cause.key, f.destination, f.topic_arn or target.topic_arn) for f in failures if f.cause.key in CHECKABLE}
    )
    facts = {arn: queue_facts(clients, arn, target.account_id) for arn in sorted({arn for _, arn, _ in pairs})}
    found = [judge(cause, facts[arn], arn, topic) for cause, arn, topic in pairs]
    return tuple(c for c in found if c is not None)
