"""Pure: an environment's maintenance windows -> Datadog downtimes and drain notes (the stretches they mute,
as an evaluation reads them: sync.expand.mute_records).

Scoping. A v2 downtime selects monitors by their own tags, ANDed, so it follows a monitor that is deleted and
created again. A set of metrics cannot be expressed as one AND of tags, so each window gets one downtime per
queue and muted metric, selecting `managed-by:obs`, `env:`, `queue:` and `metric:`: exactly the muted
monitors of that queue, never its DLQ or delivery-failure monitors, and never a monitor obs does not manage.

The drain check. A downtime of a parked metric lasts the window plus the queue's drain grace (`drain_minutes`,
else from the queue's class) plus the time its metrics take to show the drain (SETTLE_MINUTES); one of a
stopped metric lasts the window plus the time a restart takes to show (RESTART_MINUTES), so workers that stay
down page soon after the window. When it expires with the monitor still alerting, Datadog notifies at once
(`notify_end_types: expired`), and the muted monitors' messages carry a line naming the windows that mute them.
So parked work that has not drained pages through the queue's own monitors, with the reason, and no separate
monitor per window is needed (which would duplicate every threshold of the queue).

Cost. Which windows mute which queue is worked out once per environment (windows x scoped queues), so a
monitor looks its notes up in a dict instead of scanning every window.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from functools import cache

from sync.core import recurrence
from sync.core.downtimes import schedule_words
from sync.core.durations import text as duration
from sync.core.keys import Key
from sync.core.kinds import DOWNTIME
from sync.core.namespaces import NO_NAMESPACE, Ownership
from sync.core.resources import Resource
from sync.definitions.maintenance import check_grace, mutes
from sync.definitions.model import ALL, PARKED, Definitions, Environment, Queue, Schedule, Window, maintenance_of
from sync.definitions.source import Source
from sync.expand.settings import Shared, settings_for

DRAIN_METRIC = "backlog_minutes"  # its critical threshold (minutes) is how long the class may take to drain
DEFAULT_DRAIN_MINUTES = 60  # a queue whose class declares neither an SLO nor a drain threshold
# How long after a queue drains its monitors still see it full: the latest arrival of a point (crawled 17 min,
# streamed 5) plus the longest window of a muted monitor (15 min). A downtime that ends sooner notifies the
# alert of a queue that has in fact drained: obs test showed it with scenarios/maintenance-parks-work.yaml.
SETTLE_MINUTES = {"crawler": 17 + 15, "streams": 5 + 15}
# How long after the workers restart a monitor that reads stopped workers as a fault still sees them stopped:
# the latest arrival of a point, then 8 minutes for their first jobs to finish and a composite to follow its
# monitors. Such a monitor clears on the first point that shows the workers back, not on a whole window, and
# pages at the end of this grace if they stay down: under half an hour after the window (obs test:
# scenarios/maintenance-workers-stay-down.yaml and maintenance-workers-return.yaml).
RESTART_MINUTES = {"crawler": 17 + 8, "streams": 5 + 8}
# Datadog's notification on expiry is what pages when parked work did not drain: see the module docstring.
NOTIFY_END_STATES = ("alert", "no data", "warn")
# An ad-hoc window still alerting when it expires or is ended (canceled): Datadog notifies then, so an alert
# raised while muted is not left unannounced (https://docs.datadoghq.com/api/latest/downtimes/).
# The metric part of the key of a downtime that mutes every monitor of a queue (a window that mutes `all`).
EVERY = "all"
ADHOC_END_TYPES = ("canceled", "expired")


@dataclass(frozen=True)
class Muting:
    """One window's hold on some metrics of one queue, and its grace after the window: the queue's grace to
    drain and its metrics to show it (SETTLE_MINUTES) for parked metrics, a restart's (RESTART_MINUTES) for
    the others. A window that mutes metrics of both kinds holds the queue with two."""

    window: Window
    metrics: frozenset[str]
    drain_minutes: int
    # Of drain_minutes, the part that is the metrics' delay, not the queue's: data-time measures such as an
    # SLO's time slices need only the rest (see sync.expand.corrections).
    delay_minutes: int = 0
    whole: bool = False  # the window mutes `all` and scopes the queue: every monitor of it, in one downtime

    @property
    def data_minutes(self) -> int:
        return self.drain_minutes - self.delay_minutes


Mutings = Mapping[str, tuple[Muting, ...]]  # queue -> the windows that mute some of its monitors


def mutings(defs: Definitions, env: Environment, queues: Sequence[Queue], shared: Shared) -> Mutings:
    """For each queue, the windows that mute it, one Muting per grace; computed once per environment."""
    if not env.maintenance:
        return {}
    by_name = {q.name: q for q in queues}
    treatments = maintenance_of(defs.metrics)
    parked = frozenset(name for name, treatment in treatments.items() if treatment == PARKED)
    out: dict[str, list[Muting]] = {}
    for window in env.maintenance:
        muted = frozenset(mutes(defs, window))
        held: dict[str, frozenset[str]] = {q.name: muted for q in _scoped(window, queues)}
        for name in window.parking:  # parked work grows there whether or not its workers stop
            if name in by_name:
                held[name] = held.get(name, frozenset()) | parked
        whole = window.mutes == ALL
        scoped = {q.name for q in _scoped(window, queues)}
        for name, metrics in held.items():
            draining = metrics & parked
            if draining:
                grace = window.drain_minutes
                if grace is None:
                    grace = drain_minutes(defs, env, by_name[name], shared)
                settle = SETTLE_MINUTES[env.metrics_source]
                out.setdefault(name, []).append(
                    Muting(window, draining, grace + settle, settle, whole and name in scoped)
                )
            if metrics - parked:  # stopped, or named by the window although declared live
                restart = RESTART_MINUTES[env.metrics_source]
                out.setdefault(name, []).append(
                    Muting(window, metrics - parked, restart, restart, whole and name in scoped)
                )
    return {name: tuple(found) for name, found in out.items()}


def end_grace(defs: Definitions, env: Environment, queue: Queue, metric: str, shared: Shared) -> int:
    """Minutes a queue's downtime of this metric still mutes once its maintenance is ended early (obs maintenance
    end): what a planned window adds after its end. The metrics show the restart, and parked work its drain, only
    that much later; a downtime ended at once would notify of states those metrics still hold from the
    maintenance."""
    if maintenance_of(defs.metrics).get(metric) == PARKED:
        return drain_minutes(defs, env, queue, shared) + SETTLE_MINUTES[env.metrics_source]
    return RESTART_MINUTES[env.metrics_source]


def _scoped(window: Window, queues: Sequence[Queue]) -> list[Queue]:
    if window.queues is not None:
        names = set(window.queues)
        return [q for q in queues if q.name in names]  # a queue disabled here has no monitors to mute
    return [q for q in queues if window.cls is None or q.cls == window.cls]


def drain_minutes(defs: Definitions, env: Environment, queue: Queue, shared: Shared) -> int:
    """The class's grace to drain: the longer of its SLO and its drain-time (backlog) threshold."""
    found = [math.ceil(queue.slo_seconds / 60)] if queue.slo_seconds else []
    metric = next((m for m in defs.metrics if m.name == DRAIN_METRIC), None)
    if metric is not None and (metric.classes is None or queue.cls in metric.classes):
        settings = settings_for(defs, env, queue, metric, shared)
        critical = settings["thresholds"].get("critical")
        if settings["enabled"] and not settings.get("threshold_basis") and isinstance(critical, int | float):
            found.append(math.ceil(critical))
    return max(found) if found else DEFAULT_DRAIN_MINUTES


def drain_note(held: Iterable[Muting], metric: str) -> str:
    """The line a muted monitor's alert carries: which window may have left work behind."""
    named = [
        f"`{m.window.name}` ({_words(m.window)}, {m.drain_minutes} min to drain and show it)"
        for m in held
        if metric in m.metrics
    ]
    if not named:
        return ""
    return (
        "{{#is_alert}}If the maintenance window "
        + " or ".join(named)
        + " just ended, it left work behind: the queue did not return to normal in time.{{/is_alert}}"
    )


def downtimes(env: Environment, held: Mutings, monitors: Iterable[Resource]) -> list[Resource]:
    """One downtime per window, queue and muted metric that has a monitor here."""
    present = {(m.queue, Key.of(m.key).metric) for m in monitors if m.queue is not None}
    out = []
    for queue, found in held.items():
        for muting in found:
            if muting.whole:
                continue
            for metric in sorted(muting.metrics):
                if (queue, metric) in present and not _over(muting.window, muting.drain_minutes):
                    out.append(downtime(env, muting, queue, metric))
        watched = any(q == queue for q, _ in present)
        out += [
            downtime(env, m, queue, EVERY)
            for m in whole_queue_holds(found)
            if watched and not _over(m.window, m.drain_minutes)
        ]
    return out


def whole_queue_holds(found: Iterable[Muting]) -> list[Muting]:
    """Per window that mutes `all`, its longest hold of the queue: one downtime mutes every monitor of it."""
    longest: dict[str, Muting] = {}
    for muting in found:
        name = muting.window.name
        if muting.whole and (name not in longest or muting.drain_minutes > longest[name].drain_minutes):
            longest[name] = muting
    return [longest[name] for name in sorted(longest)]


def downtime(env: Environment, muting: Muting, queue: str, metric: str) -> Resource:
    window = muting.window
    key = f"{env.name}/{queue}/{metric}/maintenance/{window.name}"
    body = {
        # Our monitors are not grouped: a scope on group tags would match nothing, so every group it is.
        "scope": "*",
        "monitor_identifier": {"monitor_tags": monitor_tags(env.ownership, env.name, queue, metric)},
        "message": message(env.name, window, queue, metric, muting.drain_minutes, env.ownership.line(key)),
        "display_timezone": window.schedule.timezone,
        "schedule": schedule(window, muting.drain_minutes, env.source),
        "mute_first_recovery_notification": True,  # no "recovered" for an alert nobody was told about
        "notify_end_states": list(NOTIFY_END_STATES),
        "notify_end_types": ["expired"],
    }
    return Resource(kind=DOWNTIME, key=key, body=body, env=env.name, queue=queue)


def monitor_tags(ownership: Ownership, env: str, queue: str, metric: str) -> list[str]:
    """The tags a downtime mutes by: only monitors of this definitions set's namespace carry them all (every
    monitor of the queue for EVERY)."""
    which = [] if metric == EVERY else [f"metric:{metric}"]
    return sorted([*ownership.monitor_tags(), f"env:{env}", f"queue:{queue}", *which])


def message(env: str, window: Window, queue: str, metric: str, grace: int, marker: str) -> str:
    lines = [f"[{env}] maintenance {window.name}: {queue} {'every monitor' if metric == EVERY else metric} muted"]
    if window.description:
        lines.append(window.description)
    lines += [
        f"When: {_words(window)}, plus {grace} min for the queue to drain and its metrics to show it.",
        "",
        marker,
    ]
    return "\n".join(lines)


def schedule(window: Window, grace: int, source: Source | None = None) -> dict[str, object]:
    """The downtime's schedule: the recurrences that mute the window plus `grace` (sync.core.recurrence), or
    what is left of a one-time window when the definitions were loaded: without a start once it has begun
    (Datadog starts it when it is created, and does not compare it), empty once it is over."""
    sched = window.schedule
    if sched.rrule is not None:
        check_grace(window, grace, source)
        found = recurrence.recurrences(sched.rrule, sched.timezone, sched.minutes, grace)
        rendered = [{"rrule": rule, "duration": duration(length)} for rule, length in found]
        return {"recurrences": rendered, "timezone": sched.timezone}
    assert sched.start is not None and sched.end is not None  # a one-time window has both
    end = sched.end + timedelta(minutes=grace)
    if sched.now is not None and end <= sched.now:
        return {}
    if sched.now is not None and sched.start <= sched.now:
        return {"end": end.isoformat()}
    return {"start": sched.start.isoformat(), "end": end.isoformat()}


def _over(window: Window, grace: int) -> bool:
    """Whether a one-time window and its grace were over when the definitions were loaded."""
    sched = window.schedule
    return sched.end is not None and sched.now is not None and sched.end + timedelta(minutes=grace) <= sched.now


def listing(env: Environment) -> str:
    """The environment's planned windows as a markdown list, for the on-call dashboard."""
    if not env.maintenance:
        return "No planned maintenance windows. `obs maintenance list --env " + env.name + "` shows ad-hoc ones."
    lines = []
    for window in env.maintenance:
        scope = f"class {window.cls}" if window.cls else "all"
        if window.queues is not None:
            scope = ", ".join(window.queues)
        parking = f"; parks work in {', '.join(window.parking)}" if window.parking else ""
        lines.append(f"- **{window.name}**: {_words(window)}; queues {scope}{parking}. {window.description}".rstrip())
    return "\n".join(lines)


def _words(window: Window) -> str:
    return _schedule_words(window.schedule)


@cache  # the same few schedules, in the note of every monitor they mute
def _schedule_words(sched: Schedule) -> str:
    if sched.rrule is not None:
        return schedule_words(
            {"recurrences": [{"rrule": sched.rrule, "duration": duration(sched.minutes)}], "timezone": sched.timezone}
        )
    return schedule_words(
        {"start": sched.start and sched.start.isoformat(), "end": sched.end and sched.end.isoformat()}
    )


def adhoc(
    ownership: Ownership, env: str, queue: str, metric: str, start: datetime, end: datetime, reason: str
) -> dict[str, object]:
    """An unplanned window's downtime (obs maintenance start): the scoping of a planned one, its own marker."""
    lines = [f"[{env}] ad-hoc maintenance: {queue} {metric} muted"]
    reason = one_line(reason)
    if reason:
        lines.append(f"Reason: {reason}")
    lines += [f"Until {end:%Y-%m-%d %H:%M} UTC (obs maintenance end --env {env} --queue {queue} ends it sooner).", ""]
    lines.append(ownership.adhoc_line(f"{env}/{queue}/{metric}"))
    return {
        "scope": "*",
        "monitor_identifier": {"monitor_tags": monitor_tags(ownership, env, queue, metric)},
        "message": "\n".join(lines),
        "display_timezone": "UTC",
        "schedule": {"start": start.astimezone(UTC).isoformat(), "end": end.astimezone(UTC).isoformat()},
        "mute_first_recovery_notification": True,
        "notify_end_states": list(NOTIFY_END_STATES),
        "notify_end_types": list(ADHOC_END_TYPES),
    }


def adhoc_key(message: str, ownership: Ownership = NO_NAMESPACE) -> str | None:
    """`env/queue/metric` of an ad-hoc downtime of this namespace, from its marker line (the last); None for any
    other downtime (another namespace's too)."""
    key = Key.parse(ownership.adhoc_key(message) or "")
    return str(key) if key is not None and len(key.parts) == 3 else None


def one_line(text: str) -> str:
    """User text for a message, on one line: a line of its own could pass for one obs writes."""
    return " ".join(text.split())
