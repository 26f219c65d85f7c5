"""Pure: a window's recurrence in the form a recurring SLO correction takes.

A correction's RRULE accepts only FREQ, INTERVAL, COUNT, UNTIL and BYDAY
(https://docs.datadoghq.com/api/latest/service-level-objective-corrections/): the time of day a window
gives with BYHOUR and BYMINUTE moves into the correction's `start`, the first occurrence on or after a
fixed reference date, so the body does not depend on when it is rendered or synced.

The occurrences come from the one recurrence engine (sync.core.recurrence), as the downtimes' do.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

from sync.core import recurrence as engine

# A Monday, so that weekly rules start in a whole week; before any window obs has rendered.
REFERENCE = datetime(2024, 1, 1)
# What a correction's RRULE keeps of a window's; the time of day goes into its start.
_KEPT = ("FREQ", "UNTIL", "BYDAY")
_TIME_OF_DAY = ("BYHOUR", "BYMINUTE", "BYSECOND")
_FREQS = ("DAILY", "WEEKLY")


@dataclass(frozen=True)
class Recurrence:
    rrule: str  # FREQ first, then UNTIL and BYDAY as the window gave them
    first: datetime  # the first occurrence on or after REFERENCE, aware, in the window's time zone


class Unmappable(ValueError):
    """A window rule a correction cannot repeat exactly; the message says why, for the definitions' error."""


def recurrence(rule: str, timezone: str) -> Recurrence | None:
    """The correction's rule and first start for a window's RRULE (canonical: upper case, FREQ first); None
    for a rule whose UNTIL lies before the reference date, which has nothing left to correct."""
    parts = dict(p.split("=", 1) for p in rule.split(";") if "=" in p)
    freq = parts.get("FREQ", "")
    if freq not in _FREQS or (freq == "WEEKLY" and "BYDAY" not in parts):
        raise Unmappable("an SLO correction repeats it exactly only as FREQ=DAILY, or FREQ=WEEKLY with BYDAY")
    other = sorted(set(parts) - {*_KEPT, *_TIME_OF_DAY, "INTERVAL"})
    if other or parts.get("INTERVAL", "1") != "1":
        # INTERVAL and COUNT count from a first occurrence the window does not state, and the rest the API refuses.
        raise Unmappable(f"an SLO correction cannot repeat {', '.join(other) or 'INTERVAL'} as the window does")
    hours, minutes = parts.get("BYHOUR", ""), parts.get("BYMINUTE", "0")
    if not hours.isdigit() or not minutes.isdigit() or parts.get("BYSECOND", "0") != "0":
        raise Unmappable("the window needs one time of day (a single BYHOUR and BYMINUTE) for its SLO correction")
    zone = ZoneInfo(timezone)
    since = REFERENCE.replace(tzinfo=zone).astimezone(UTC)
    found = engine.starts(rule, timezone, since, since + timedelta(days=8))  # a daily or weekly rule's first week
    if not found:
        return None
    kept = [f"{name}={parts[name]}" for name in _KEPT if name in parts]
    return Recurrence(";".join(kept), found[0].astimezone(zone))
