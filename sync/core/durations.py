"""Pure: durations as written in definitions, flags and Datadog's own strings (`90m`, `2h`, `1d`, `1w`), read and
written in one place. Callers keep their own allowed ranges and units, and their own error messages.

Datadog's form is one positive whole number and one unit (downtime durations, query windows `last_5m`, burn-rate
windows); the trace flags also take seconds and sums such as `1h30m`.
"""

from __future__ import annotations

import re

UNIT_MINUTES = {"m": 1, "h": 60, "d": 1440, "w": 10080}
UNIT_SECONDS = {"w": 604800, "d": 86400, "h": 3600, "m": 60, "s": 1}
_LARGEST_FIRST = (("w", 10080), ("d", 1440), ("h", 60), ("m", 1))
_SIMPLE = re.compile(r"^([1-9][0-9]*)([mhdw])$")
_PART = re.compile(r"(\d+)\s*(w|d|h|m|s)", re.IGNORECASE)
_LONGEST_DIGITS = 12  # long digit strings are refused before int() sees them: nothing can overflow
_WORD_UNITS = (("w", 604800), ("d", 86400), ("h", 3600), ("min", 60))


def split(text: object, units: str = "mhdw") -> tuple[int, str] | None:
    """`90m` -> (90, "m"): a positive count and one of `units`, nothing around them; None when the text is not
    one."""
    found = _SIMPLE.match(str(text))
    if not found or found.group(2) not in units:
        return None
    return int(found.group(1)), found.group(2)


def minutes(text: object, units: str = "mhdw") -> int | None:
    """Minutes in a duration such as 90m, 2h, 1d or 1w (Datadog's form), spaces around it ignored; None when it
    is not one."""
    found = split(str(text).strip(), units)
    return of(*found) if found else None


def of(count: int, unit: str) -> int:
    """Minutes in `count` of `unit` (m, h, d or w)."""
    return count * UNIT_MINUTES[unit]


def text(total: int) -> str:
    """Datadog's duration string in the largest unit that divides it: 120 -> 2h, 90 -> 90m."""
    return next(f"{total // size}{unit}" for unit, size in _LARGEST_FIRST if total % size == 0)


def seconds(text: str) -> int | None:
    """Seconds in `90s`, `15m`, `2h`, `1d`, `1w` or a sum such as `1h30m` (spaces and case ignored); None when
    the text is not one, -1 when a count has more digits than any sensible duration."""
    compact = text.strip().replace(" ", "")
    parts = _PART.findall(compact)
    if not compact or "".join(n + u for n, u in parts).lower() != compact.lower():
        return None
    if any(len(n.lstrip("0")) > _LONGEST_DIGITS for n, _ in parts):
        return -1
    return sum(int(n) * UNIT_SECONDS[u.lower()] for n, u in parts)


def words(total: float) -> str:
    """`4 h`, `90 min`, `1.5 d`, `45 s`, from seconds: the largest unit that reads as a short number."""
    for name, size in _WORD_UNITS:
        if (total >= size and (total / size).is_integer()) or total >= 2 * size:
            return f"{number(round(total / size, 1))} {name}"
    return f"{number(total)} s"


def hours_and_minutes(total: int) -> str:
    """`2 h 30 min`, `45 min`, from minutes: how a schedule's length reads."""
    hours, rest = divmod(total, 60)
    if not hours:
        return f"{rest} min"
    return f"{hours} h" + (f" {rest} min" if rest else "")


def number(value: float) -> str:
    """`10,000`, `1.5`: a whole value without its `.0`, thousands grouped."""
    return f"{int(value):,}" if float(value).is_integer() else f"{value:,}"
