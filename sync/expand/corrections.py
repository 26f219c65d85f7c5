"""Pure: an environment's planned maintenance windows -> SLO corrections of the queues they hold.

A window parks work on purpose, so the oldest message of a held queue ages past its SLO for the whole window
and its drain grace: every one of those minutes would be bad, and a nightly window would spend a 30-day error
budget in days. A correction (category "Scheduled Maintenance") covers the window plus the queue's drain grace
(`Muting.data_minutes`), in the time of the data: unlike the downtimes it needs no allowance for the metrics'
delay, so parked work left behind burns the budget from the end of its grace. A time-slice SLO counts
corrected slices as uptime
(https://docs.datadoghq.com/service_management/service_level_objectives/time_slice/#corrections).

The correction names its SLO by ID, written as a placeholder until the SLO exists (see sync.core.placeholders).
Its ownership marker is the last line of its description, which holds no user text (not the window's
description): nothing a person writes can forge or hide it.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import timedelta

from sync.core import placeholders
from sync.core.downtimes import schedule_words
from sync.core.durations import text as duration
from sync.core.kinds import SLO, SLO_CORRECTION
from sync.core.resources import Resource
from sync.definitions.model import Environment, Window
from sync.expand.correction_time import Unmappable, recurrence
from sync.expand.maintenance import Muting, Mutings

CATEGORY = "Scheduled Maintenance"


def correction_key(env: str, queue: str, window: str) -> str:
    return f"{env}/{queue}/slo/maintenance/{window}"


def corrections(env: Environment, held: Mutings, objectives: Iterable[Resource]) -> list[Resource]:
    """One correction per window and held queue that has an SLO here, over the window's longest hold on the
    queue (a window holding parked and stopped metrics holds the queue twice: its age is bad all along)."""
    slos = {r.queue: r.key for r in objectives if r.kind == SLO and r.queue is not None}
    found = []
    for queue, held_by in sorted(held.items()):
        longest: dict[str, Muting] = {}
        for muting in held_by:
            name = muting.window.name
            if name not in longest or muting.data_minutes > longest[name].data_minutes:
                longest[name] = muting
        if queue in slos:
            found += [correction(env, muting, queue, slos[queue]) for muting in longest.values()]
    return [r for r in found if r is not None]


def correction(env: Environment, muting: Muting, queue: str, slo_key: str) -> Resource | None:
    """The window's correction of the queue's SLO; None for a recurrence that ended before any start obs gives."""
    window = muting.window
    key = correction_key(env.name, queue, window.name)
    when = timing(env, window, muting.data_minutes)
    if when is None:
        return None
    body: dict[str, object] = {
        "slo_id": placeholders.placeholder(SLO.name, slo_key),
        "category": CATEGORY,
        "description": description(env.name, window, queue, muting.data_minutes, env.ownership.line(key)),
        **when,
    }
    return Resource(kind=SLO_CORRECTION, key=key, body=body, env=env.name, queue=queue)


def timing(env: Environment, window: Window, grace: int) -> dict[str, object] | None:
    """start and end (a one-time window), or start, duration and rrule (a recurring one), in epoch seconds."""
    sched = window.schedule
    if sched.rrule is None:
        assert sched.start is not None and sched.end is not None  # a one-time window has both
        end = sched.end + timedelta(minutes=grace)
        return {"start": int(sched.start.timestamp()), "end": int(end.timestamp()), "timezone": "UTC"}
    try:
        found = recurrence(sched.rrule, sched.timezone)
    except Unmappable as exc:
        raise env.source.error(
            ("maintenance", window.index, "schedule", "rrule"),
            f"window '{window.name}' holds queues with an SLO, whose correction cannot follow it: {exc}",
            "write the rule as FREQ=DAILY or FREQ=WEEKLY;BYDAY=..., with one BYHOUR and BYMINUTE (UNTIL may stay)",
        ) from None
    if found is None:
        return None
    return {
        "start": int(found.first.timestamp()),
        "duration": (sched.minutes + grace) * 60,
        "rrule": found.rrule,
        "timezone": sched.timezone,
    }


def description(env: str, window: Window, queue: str, grace: int, marker: str) -> str:
    return "\n".join(
        [
            f"[{env}] maintenance {window.name}: {queue} SLO corrected",
            f"When: {_words(window)}, plus {grace} min for the queue to drain.",
            "Work parked on purpose does not spend the error budget.",
            "",
            marker,
        ]
    )


def _words(window: Window) -> str:
    sched = window.schedule
    if sched.rrule is not None:
        recurrences = [{"rrule": sched.rrule, "duration": duration(sched.minutes)}]
        return schedule_words({"recurrences": recurrences, "timezone": sched.timezone})
    return schedule_words(
        {"start": sched.start and sched.start.isoformat(), "end": sched.end and sched.end.isoformat()}
    )
