"""Pure: Datadog downtimes (API v2 bodies) as the mute windows of a scenario's minutes (section "Downtimes")."""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import UTC, datetime, timedelta, tzinfo
from typing import Any

from sync.core.evaluation.notes import Refused
from sync.core.evaluation.notify import MuteWindow

_DURATION = re.compile(r"^(\d+)([mhdw])$")
_UNIT = {"m": 1, "h": 60, "d": 1440, "w": 10080}
_DAYS = ("MO", "TU", "WE", "TH", "FR", "SA", "SU")
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
            # An API create without these returned every state and "expired" only (section "Downtimes").
            end_states=tuple(attributes.get("notify_end_states") or _ALL_STATES),
            notify_on_expiry="expired" in (attributes.get("notify_end_types") or ("expired",)),
        )
        for start, end in spans
    )


def _spans(schedule: Mapping[str, Any], origin: datetime, duration: int, zone: tzinfo) -> list[tuple[int, int]]:
    def minute(moment: datetime) -> int:
        return int((moment - origin).total_seconds() // 60)

    if "recurrences" not in schedule:
        begins = _instant(schedule.get("start"), UTC) or origin
        ends = _instant(schedule.get("end"), UTC)
        return [(max(minute(begins), 0), minute(ends) if ends else duration + 1)]
    out: list[tuple[int, int]] = []
    for recurrence in schedule["recurrences"]:
        length = _length(str(recurrence.get("duration", "")))
        first = _instant(recurrence.get("start"), zone)
        if first is None:
            raise Refused("a recurring downtime without a start cannot be placed in the scenario's minutes")
        for occurrence in _occurrences(str(recurrence.get("rrule", "")), first, origin + timedelta(minutes=duration)):
            start = minute(occurrence)
            if start + length > 0:
                out.append((max(start, 0), start + length))
    return sorted(out)


def _occurrences(rrule: str, first: datetime, until: datetime) -> list[datetime]:
    """DAILY and WEEKLY rules, with INTERVAL and BYDAY: what schedules out-of-hours downtimes."""
    parts = dict(part.split("=", 1) for part in rrule.split(";") if "=" in part)
    freq, interval = parts.get("FREQ"), int(parts.get("INTERVAL", "1"))
    if freq not in ("DAILY", "WEEKLY") or set(parts) - {"FREQ", "INTERVAL", "BYDAY"}:
        raise Refused(f"the recurrence {rrule!r} is not modelled: use FREQ=DAILY or WEEKLY with INTERVAL and BYDAY")
    days = {_DAYS.index(d) for d in parts["BYDAY"].split(",")} if "BYDAY" in parts else None
    out = []
    day = first
    while day < until:
        weeks = (day.date() - first.date()).days // 7
        on_day = days is None or day.weekday() in days
        if (freq == "DAILY" and ((day.date() - first.date()).days % interval == 0) and on_day) or (
            freq == "WEEKLY"
            and weeks % interval == 0
            and (day.weekday() in days if days else day.weekday() == first.weekday())
        ):
            out.append(day)
        day += timedelta(days=1)
    return out


def _length(text: str) -> int:
    match = _DURATION.match(text)
    if not match:
        raise Refused(f"the downtime duration {text!r} is not a number of m, h, d or w")
    return int(match.group(1)) * _UNIT[match.group(2)]


def _instant(text: Any, zone: tzinfo) -> datetime | None:
    if not text:
        return None
    moment = datetime.fromisoformat(str(text).replace("Z", "+00:00"))
    return moment if moment.tzinfo else moment.replace(tzinfo=zone)
