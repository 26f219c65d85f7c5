"""Pure: Datadog downtimes (API v2 bodies) as the mute windows of a scenario's minutes
(https://docs.datadoghq.com/monitors/downtimes/)."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime, timedelta, tzinfo
from typing import Any

from sync.core import recurrence
from sync.core.evaluation.notes import Refused
from sync.core.evaluation.notify import MuteWindow

_ALL_STATES = ("alert", "warn", "no data")


def windows(body: Mapping[str, Any], starts_at: datetime, duration: int, zone: tzinfo) -> tuple[MuteWindow, ...]:
    """The downtime's windows that overlap the scenario, whose minute 0 is `starts_at` (timezone-aware).
    `zone` is the downtime's own timezone, for its recurrences."""
    attributes: Mapping[str, Any] = (body.get("data") or {}).get("attributes") or body
    target = attributes.get("monitor_identifier") or {}
    tags = tuple(target.get("monitor_tags") or ())
    key = target.get("monitor_id")
    if key is not None:
        text = str(key)
        key = text[len("${monitor_id:") : -1] if text.startswith("${monitor_id:") else text
    if not tags and key is None:
        raise Refused("the downtime names no monitor_identifier")
    spans = _spans(attributes.get("schedule") or {}, starts_at, duration, zone)
    return tuple(
        MuteWindow(
            start,
            end,
            monitor_tags=tags or ("*",),
            monitor_key=key,
            scope=str(attributes.get("scope") or "*"),
            mute_first_recovery_notification=bool(attributes.get("mute_first_recovery_notification")),
            # An API create without these returned every state and "expired" only: the default excludes cancels.
            end_states=tuple(attributes.get("notify_end_states") or _ALL_STATES),
            notify_on_expiry="expired" in (attributes.get("notify_end_types") or ("expired",)),
        )
        for start, end in spans
    )


def _spans(schedule: Mapping[str, Any], origin: datetime, duration: int, zone: tzinfo) -> list[tuple[int, int]]:
    """The schedule's muted minutes, through the engine that renders the downtimes obs writes."""

    def minute(moment: datetime) -> int:
        return int((moment - origin).total_seconds() // 60)

    for found in schedule.get("recurrences") or ():
        wrong = _unmodelled(found)
        if wrong:
            raise Refused(wrong)
    name = str(getattr(zone, "key", None) or zone)
    try:
        found = recurrence.spans(schedule, origin, origin + timedelta(minutes=duration + 1), name)
    except ValueError as exc:
        raise Refused(str(exc)) from None
    return [(max(minute(begins), 0), minute(ends)) for begins, ends in found]


def _unmodelled(found: Mapping[str, Any]) -> str:
    """Why a recurrence cannot be placed: finer than hourly, or (without a start) dependent on when it was made."""
    rule = str(found.get("rrule", ""))
    if recurrence.parts(rule).get("FREQ") not in recurrence.FREQS:
        return f"the recurrence {rule!r} is not modelled: it repeats more often than hourly"
    if not found.get("start") and recurrence.problem(rule) is not None:
        return f"the recurrence {rule!r} without a start depends on when Datadog created it, which obs cannot know"
    return ""
