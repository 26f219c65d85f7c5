"""Pure: a downtime's schedule in words, and which monitors its tags select, for plans and previews."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any

from sync.core.resources import Resource

_FREQ = {"DAILY": "daily", "WEEKLY": "weekly", "MONTHLY": "monthly", "YEARLY": "yearly", "HOURLY": "hourly"}
_DAYS = {"MO": "Mon", "TU": "Tue", "WE": "Wed", "TH": "Thu", "FR": "Fri", "SA": "Sat", "SU": "Sun"}
_UNITS = (("w", 10080), ("d", 1440), ("h", 60), ("m", 1))


def duration(minutes: int) -> str:
    """Datadog's duration string in the largest unit that divides it: 120 -> 2h, 90 -> 90m."""
    for unit, size in _UNITS:
        if minutes % size == 0:
            return f"{minutes // size}{unit}"
    return f"{minutes}m"  # pragma: no cover - every whole number of minutes divides by 1


def minutes_of(text: str) -> int:
    sizes = dict(_UNITS)
    return int(text[:-1]) * sizes[text[-1]] if text and text[:-1].isdigit() and text[-1] in sizes else 0


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
    if "BYHOUR" in parts:
        minute = parts.get("BYMINUTE", "0").split(",")[0]
        hours = ", ".join(f"{int(h):02d}:{int(minute):02d}" for h in parts["BYHOUR"].split(","))
        words.append(f"at {hours}")
    words.append(f"for {_length(minutes_of(str(recurrence.get('duration', ''))))}")
    return " ".join(words)


def _length(minutes: int) -> str:
    hours, rest = divmod(minutes, 60)
    if not hours:
        return f"{rest} min"
    return f"{hours} h" + (f" {rest} min" if rest else "")


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
