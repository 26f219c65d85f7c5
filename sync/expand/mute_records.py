"""Pure: what an evaluation (obs test) needs of an environment's planned maintenance windows: each stretch of
time a downtime obs writes mutes, with the tags of the monitors it mutes."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from sync.core import recurrence
from sync.definitions.model import Definitions, Environment, Window
from sync.definitions.source import Source
from sync.expand.maintenance import EVERY, Mutings, monitor_tags, mutings, schedule, whole_queue_holds


@dataclass(frozen=True)
class MuteRecord:
    """One stretch of time in which monitors with all of `monitor_tags` are muted: what an evaluation needs."""

    window: str
    start: datetime
    end: datetime  # the window's end plus the drain grace: when the downtime expires
    window_end: datetime
    monitor_tags: tuple[str, ...]


def records(defs: Definitions, env: Environment, start: datetime, end: datetime) -> list[MuteRecord]:
    """What an evaluation needs of an environment's planned windows over [start, end): each muted stretch,
    with the tags of the monitors it mutes (a monitor is muted when it carries all of them)."""
    return mute_records(env, mutings(defs, env, defs.env_queues[env.name], {}), start, end)


def mute_records(env: Environment, held: Mutings, start: datetime, end: datetime) -> list[MuteRecord]:
    """Every muted stretch of each downtime that overlaps [start, end), in time order: what the downtime obs
    writes mutes (its rendered schedule through sync.core.recurrence), whenever the definitions were loaded."""
    out = []
    for queue, found in held.items():
        holds = [(m, sorted(m.metrics)) for m in found if not m.whole] + [
            (m, [EVERY]) for m in whole_queue_holds(found)
        ]
        for muting, metrics in holds:
            window = muting.window
            for begins, until in _muted(window, muting.drain_minutes, env.source, start, end):
                finishes = _window_end(window, begins)
                for metric in metrics:
                    tags = tuple(monitor_tags(env.ownership, env.name, queue, metric))
                    out.append(MuteRecord(window.name, begins, until, finishes, tags))
    return sorted(out, key=lambda r: (r.start, r.window, r.monitor_tags))


def _muted(window: Window, grace: int, source: Source, start: datetime, end: datetime) -> list[recurrence.Span]:
    sched = window.schedule
    if sched.rrule is None:
        assert sched.start is not None and sched.end is not None
        until = sched.end + timedelta(minutes=grace)
        return [(sched.start, until)] if sched.start < end and until > start else []
    return recurrence.spans(schedule(window, grace, source), start, end)


def _window_end(window: Window, begins: datetime) -> datetime:
    sched = window.schedule
    if sched.rrule is None:
        assert sched.end is not None
        return sched.end
    return recurrence.wall_end(begins, sched.minutes, sched.timezone)


def occurrences(window: Window, start: datetime, end: datetime) -> list[tuple[datetime, datetime]]:
    """The window's own stretches (start, wall-clock end, without drain grace) that overlap [start, end), in UTC."""
    sched = window.schedule
    if sched.rrule is None:
        assert sched.start is not None and sched.end is not None
        return [(sched.start, sched.end)] if sched.start < end and sched.end > start else []
    return recurrence.occurrences(sched.rrule, sched.timezone, sched.minutes, start, end)
