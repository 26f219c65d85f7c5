"""Pure: a downtime's schedule in words, and which monitors its tags select, for plans and previews."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any

from sync.core import durations
from sync.core.resources import Resource

_FREQ = {"DAILY": "daily", "WEEKLY": "weekly", "MONTHLY": "monthly", "YEARLY": "yearly", "HOURLY": "hourly"}
_DAYS = {"MO": "Mon", "TU": "Tue", "WE": "Wed", "TH": "Thu", "FR": "Fri", "SA": "Sat", "SU": "Sun"}
_MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")


def schedule_words(schedule: Mapping[str, Any]) -> str:
    """`daily at 01:00 for 2 h 30 min, Europe/Berlin time`, or `once, 2027-01-10 01:00 to 2027-01-10 03:00 UTC`."""
    recurrences = schedule.get("recurrences")
    if not recurrences:
        start, end = _short(schedule.get("start")), _short(schedule.get("end"))
        return f"once, {start or 'now'} to {end or 'forever'} UTC"
    zone = schedule.get("timezone") or "UTC"
    return "; ".join(_recurrence(r) for r in recurrences) + f", {zone} time"


def _recurrence(recurrence: Mapping[str, Any]) -> str:
    parts = dict(p.split("=", 1) for p in str(recurrence.get("rrule", "")).split(";") if "=" in p)
    words = [_FREQ.get(parts.get("FREQ", ""), parts.get("FREQ", "").lower())]
    if "BYDAY" in parts:
        days = [_DAYS.get(d, d) for d in parts["BYDAY"].split(",")]
        words = (
            [f"on {', '.join(days)}"] if parts.get("FREQ") in ("WEEKLY", "DAILY") else [*words, f"on {', '.join(days)}"]
        )
    if "BYMONTHDAY" in parts:
        days = parts["BYMONTHDAY"].split(",")
        words.append(f"days {days[0]}-{days[-1]}" if len(days) > 2 else f"day {' and '.join(days)}")
    if "BYMONTH" in parts:
        words.append(
            "of "
            + ", ".join(
                _MONTHS[int(m) - 1] if m.isdigit() and 0 < int(m) < 13 else m for m in parts["BYMONTH"].split(",")
            )
        )
    words.append(f"at {_time_of_day(parts, recurrence.get('start'))}")
    words.append(f"for {durations.hours_and_minutes(durations.minutes(str(recurrence.get('duration', ''))) or 0)}")
    return " ".join(words)


def _time_of_day(parts: Mapping[str, str], start: Any) -> str:
    """The rule's hours and minute; else its start's; else the time it was created (Datadog's DTSTART)."""
    if "BYHOUR" in parts:
        minute = parts.get("BYMINUTE", "0").split(",")[0]
        return ", ".join(f"{int(h):02d}:{int(minute):02d}" for h in parts["BYHOUR"].split(","))
    if start:
        return str(start)[11:16] or "the time it was created"
    return "the time it was created"


def _short(value: Any) -> str:
    if not value:
        return ""
    try:
        return datetime.fromisoformat(str(value)).strftime("%Y-%m-%d %H:%M")
    except ValueError:
        return str(value)


def selects(monitor_tags: Iterable[str], monitor: Mapping[str, Any]) -> bool:
    """Whether a downtime's monitor_tags (ANDed, as Datadog does) select a monitor, by its body."""
    tags = set(monitor.get("tags") or ())
    return bool(monitor_tags) and all(t == "*" or t in tags for t in monitor_tags)


def silenced(downtime: Resource, monitors: Sequence[Resource]) -> list[Resource]:
    """The monitors a downtime mutes, of those given."""
    wanted = (downtime.body.get("monitor_identifier") or {}).get("monitor_tags") or ()
    return [m for m in monitors if selects(wanted, m.body)]
