"""Pure: when a recurring maintenance window mutes, in UTC. One engine for validation, the downtimes obs writes,
and the mutes `obs test` models.

A window is an RRULE in a time zone with a duration on the wall clock (01:00 to 03:00 local). Datadog takes a
real-time duration and starts the rule when the downtime is created, so a rule must fix its own time of day and
dates (`problem`), and a night on which a daylight-saving change lengthens the wall-clock window gets a
recurrence of its own (`recurrences`).

Bounds. dateutil walks period by period to the year 9999 when a rule matches nothing, so every expansion runs in
a copy of the calendar shifted by whole 400-year cycles (which repeat weekdays and leap years exactly) to just
before 9999: a rule that never fires stops after at most 400 years of periods. Results are also capped at
MAX_OCCURRENCES.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime, timedelta
from functools import lru_cache
from itertools import pairwise
from typing import Any
from zoneinfo import ZoneInfo

from dateutil.rrule import rrulestr

from sync.core import durations

FREQS = ("HOURLY", "DAILY", "WEEKLY", "MONTHLY", "YEARLY")  # finer ones are refused: see `problem`
MAX_OCCURRENCES = 12_000  # 28 years of a daily rule, the longest stretch expanded (see `recurrences`)
MAX_RECURRENCES = 5  # per downtime, from the v2 spec (DowntimeScheduleRecurrencesResponse.recurrences)
_CYCLE = 400  # years after which the Gregorian calendar repeats, weekdays included
_TIME_PARTS = ("BYHOUR", "BYMINUTE", "BYSECOND")
_DAYS = ("MO", "TU", "WE", "TH", "FR", "SA", "SU")
# Twenty-eight years hold every weekday on every date, so a daylight-saving rule's nights all show up.
_REFERENCE = (datetime(2026, 1, 1, tzinfo=UTC), datetime(2054, 1, 1, tzinfo=UTC))

Span = tuple[datetime, datetime]
_Expand = Callable[[str, str, datetime, datetime, datetime | None], tuple[datetime, ...]]


def parts(rrule: str) -> dict[str, str]:
    return {name: value for name, _, value in (p.partition("=") for p in rrule.upper().split(";") if p)}


def time_of_day(rrule: str) -> tuple[int, int] | None:
    """The local hour and minute a rule fixes (one BYHOUR and one BYMINUTE value), else None."""
    found = parts(rrule)
    hours, mins = found.get("BYHOUR", "").split(","), found.get("BYMINUTE", "").split(",")
    if len(hours) != 1 or len(mins) != 1 or not hours[0].isdigit() or not mins[0].isdigit():
        return None
    return int(hours[0]), int(mins[0])


def daily_part(rrule: str) -> tuple[tuple[int, int] | None, str]:
    """A window's local time of day and its RRULE without BYHOUR, BYMINUTE and BYSECOND: what a schedule that
    takes its time of day from a start of its own (an SLO correction) needs."""
    kept = [p for p in rrule.split(";") if p and p.split("=", 1)[0].upper() not in _TIME_PARTS]
    return time_of_day(rrule), ";".join(kept)


def problem(rrule: str) -> tuple[str, str] | None:
    """Why a window's RRULE cannot be synced as is, with the fix; None when it can. It must parse, repeat at
    most hourly, name its time of day, and give the same occurrences whenever Datadog starts it."""
    found = parts(rrule)
    freq = found.get("FREQ")
    if freq in ("MINUTELY", "SECONDLY"):
        return f"FREQ={freq} repeats more often than hourly", "use FREQ=DAILY, WEEKLY, MONTHLY or YEARLY"
    if freq not in FREQS:
        return f"the RRULE does not parse (unknown FREQ={freq})", "write e.g. FREQ=DAILY;BYHOUR=1;BYMINUTE=0"
    if time_of_day(rrule) is None or found.get("BYSECOND", "0") != "0":
        return (
            "the RRULE does not fix its time of day: Datadog would repeat it at the time the downtime was created",
            "give one BYHOUR and one BYMINUTE value, e.g. BYHOUR=1;BYMINUTE=0 (two windows for two times)",
        )
    if "COUNT" in found or found.get("INTERVAL", "1") != "1":
        name = "COUNT" if "COUNT" in found else "INTERVAL"
        return (
            f"{name} counts from when Datadog creates the downtime, which changes with every re-creation",
            f"remove {name}: name the days with BYDAY, BYMONTHDAY or BYMONTH",
        )
    try:
        independent = _starts(rrule, "UTC", *_PROBE, None) == _starts(rrule, "UTC", *_PROBE, _OTHER_ANCHOR)
    except (ValueError, TypeError) as exc:
        return f"the RRULE does not parse ({exc})", "write e.g. FREQ=DAILY;BYHOUR=1;BYMINUTE=0"
    if not independent:
        return (
            "the RRULE takes its weekday, day or month from when Datadog creates the downtime",
            "name them: BYDAY for a weekly rule, BYMONTHDAY or BYDAY for a monthly one, BYMONTH for a yearly one",
        )
    return None


_PROBE = (datetime(2001, 1, 1, tzinfo=UTC), datetime(2002, 1, 1, tzinfo=UTC))
_OTHER_ANCHOR = datetime(2000, 2, 17, 13, 37)  # another weekday, day, month and time than the probe's start


def starts(rrule: str, zone: str, since: datetime, until: datetime, anchor: datetime | None = None) -> list[datetime]:
    """The rule's occurrences in [since, until), in UTC. `anchor` is the recurrence's local start (its
    DTSTART) when it has one; without it the rule must not depend on one (see `problem`)."""
    return list(_starts(rrule, zone, since, until, anchor))


def _expanded(rrule: str, zone: str, since: datetime, until: datetime, anchor: datetime | None) -> tuple[datetime, ...]:
    tz = ZoneInfo(zone)
    low = since.astimezone(tz).replace(tzinfo=None, second=0, microsecond=0) - timedelta(days=1)
    high = until.astimezone(tz).replace(tzinfo=None) + timedelta(days=1)
    first = anchor if anchor is not None else low
    shift = max(0, (9998 - high.year) // _CYCLE) * _CYCLE
    text, end = _without_until(rrule, tz)
    rule = rrulestr(text, dtstart=_shifted(first, shift), cache=False)
    out: list[datetime] = []
    for local in rule.xafter(_shifted(low, shift), inc=True):
        if local >= _shifted(high, shift) or len(out) >= MAX_OCCURRENCES:
            break
        if end is not None and local > _shifted(end, shift):
            break
        moment = local.replace(year=local.year - shift, tzinfo=tz).astimezone(UTC)
        if since <= moment < until:
            out.append(moment)
    return tuple(out)


_starts = lru_cache(maxsize=256)(_expanded)


def _shifted(moment: datetime, years: int) -> datetime:
    return moment.replace(year=moment.year + years)


def _without_until(rrule: str, tz: ZoneInfo) -> tuple[str, datetime | None]:
    """The rule without UNTIL (kept apart so that it moves with the shifted calendar), and UNTIL in local time."""
    kept, until = [], None
    for part in (p for p in rrule.split(";") if p):
        name, _, value = part.partition("=")
        if name.upper() != "UNTIL":
            kept.append(part)
            continue
        bare = value.strip().upper().rstrip("Z")
        moment = datetime.strptime(bare, "%Y%m%dT%H%M%S" if "T" in bare else "%Y%m%d")
        until = (
            moment.replace(tzinfo=UTC).astimezone(tz).replace(tzinfo=None)
            if value.strip().upper().endswith("Z")
            else moment
        )
    return ";".join(kept), until


def wall_end(start: datetime, length: int, zone: str) -> datetime:
    """The UTC moment `length` minutes of wall clock after `start` in the zone: 01:00 plus 120 minutes ends at
    03:00 local even when the clocks change in between. Of a local time that is missing or repeated, the later."""
    tz = ZoneInfo(zone)
    local = start.astimezone(tz).replace(tzinfo=None) + timedelta(minutes=length)
    return max(local.replace(tzinfo=tz, fold=fold).astimezone(UTC) for fold in (0, 1))


def occurrences(rrule: str, zone: str, length: int, since: datetime, until: datetime) -> list[Span]:
    """The window's own stretches (start, wall-clock end) that overlap [since, until), in UTC."""
    return _occurrences(rrule, zone, length, since, until, _starts)


def _occurrences(rrule: str, zone: str, length: int, since: datetime, until: datetime, expand: _Expand) -> list[Span]:
    early = since - timedelta(minutes=length + 120)  # an occurrence that began earlier and still lasts
    found = [(s, wall_end(s, length, zone)) for s in expand(rrule, zone, early, until, None)]
    return [(s, e) for s, e in found if e > since]


def today(moment: datetime) -> datetime:
    """The start of the moment's UTC day: checks made from it are worked out once a day, not at every load."""
    return moment.astimezone(UTC).replace(hour=0, minute=0, second=0, microsecond=0)


def collision(rrule: str, zone: str, length: int, grace: int, since: datetime) -> Span | None:
    """An occurrence within two years of the day of `since` whose downtime (the real-time durations
    `recurrences` renders, grace included) reaches the next start: a downtime that would never end. None when
    they stay apart."""
    return _collision(rrule, zone, length, grace, today(since))


@lru_cache(maxsize=256)
def _collision(rrule: str, zone: str, length: int, grace: int, since: datetime) -> Span | None:
    until = since + timedelta(days=731)
    ends: dict[datetime, datetime] = {}
    for rule, real in recurrences(rrule, zone, length, grace):
        for begins in starts(rule, zone, since, until):
            ends[begins] = max(ends.get(begins, begins), begins + timedelta(minutes=real))
    for first, second in pairwise(sorted(ends)):
        if ends[first] >= second:
            return ends[first], second
    return None


@lru_cache(maxsize=256)
def recurrences(rrule: str, zone: str, length: int, grace: int) -> tuple[tuple[str, int], ...]:
    """The (rrule, real minutes) recurrences that mute the window plus `grace` on every night: the rule with the
    window's length, and for the nights a daylight-saving change lengthens on the wall clock (01:00-03:00 is
    three real hours when the clocks go back) a yearly rule of their own, as long as those nights are. Nights
    it cannot describe so (or too many kinds) lengthen the rule itself: never unmuted before the wall-clock end."""
    base = (rrule, length + grace)
    longer = _longer_nights(rrule, zone, length)
    extras = [_yearly(rrule, zone, nights) for nights in longer.values()]
    if any(e is None for e in extras) or len(extras) >= MAX_RECURRENCES:
        return ((rrule, max(longer) + grace),)
    return (base, *((rule, real + grace) for rule, real in zip(extras, longer, strict=True) if rule is not None))


@lru_cache(maxsize=64)
def _longer_nights(rrule: str, zone: str, length: int) -> dict[int, tuple[datetime, ...]]:
    """The reference years' occurrences that last longer in real time than `length`, by their real minutes.
    Only one that spans a change of the zone's UTC offset can, so only the days around each change are expanded:
    28 years of a daily rule are 10,000 occurrences, and some 60 changes."""
    found: dict[int, set[datetime]] = {}
    for since, until in _around_changes(zone, length):
        for begins, ends in _occurrences(rrule, zone, length, since, until, _expanded):
            real = int((ends - begins).total_seconds() // 60)
            if real > length:
                found.setdefault(real, set()).add(begins)
    return {real: tuple(sorted(nights)) for real, nights in sorted(found.items())}


def _around_changes(zone: str, length: int) -> list[Span]:
    """Stretches of the reference years that hold every start of an occurrence `length` wall-clock minutes long
    that a change of the zone's UTC offset falls in (or within the two hours a change can add to its end)."""
    first, last = _REFERENCE
    reach = timedelta(minutes=length, days=1)
    return [(max(first, day - reach), min(last, day + timedelta(days=2))) for day in _changes(zone)]


@lru_cache(maxsize=16)
def _changes(zone: str) -> tuple[datetime, ...]:
    """The days of the reference years (and the two before) after which the zone's UTC offset changes within a
    day. The offset is read once a day: no zone changes it twice in a day."""
    tz = ZoneInfo(zone)
    first, last = _REFERENCE
    days = [first + timedelta(days=n) for n in range(-2, (last - first).days + 1)]
    offsets = [tz.utcoffset(day.replace(tzinfo=None)) for day in days]
    return tuple(day for day, before, after in zip(days, offsets, offsets[1:], strict=False) if before != after)


def _yearly(rrule: str, zone: str, nights: Sequence[datetime]) -> str | None:
    """A yearly rule with exactly these starts over the reference years: one month, one weekday, days of the
    month within one week (`the last Sunday of October` is BYMONTHDAY=25,...,31;BYDAY=SU)."""
    tz = ZoneInfo(zone)
    local = [n.astimezone(tz) for n in nights]
    months, weekdays = {d.month for d in local}, {d.weekday() for d in local}
    days = sorted({d.day for d in local})
    if len(months) != 1 or len(weekdays) != 1 or days[-1] - days[0] > 6:
        return None
    window = range(days[-1] - 6, days[-1] + 1) if days[-1] >= 28 else range(days[0], days[0] + 7)
    hour, minute = time_of_day(rrule) or (local[0].hour, local[0].minute)
    rule = (
        f"FREQ=YEARLY;BYMONTH={months.pop()};BYMONTHDAY={','.join(map(str, window))};"
        f"BYDAY={_DAYS[weekdays.pop()]};BYHOUR={hour};BYMINUTE={minute}"
    )
    return rule if starts(rule, zone, *_REFERENCE) == list(nights) else None


def spans(schedule: Mapping[str, Any], since: datetime, until: datetime, zone: str | None = None) -> list[Span]:
    """What a Datadog downtime schedule mutes over [since, until), in UTC, overlapping stretches merged: a
    one-time {start, end} (no end: `until`), or recurrences of real-time durations in the schedule's zone."""
    if "recurrences" not in schedule:
        begins = _instant(schedule.get("start"), "UTC") or since
        ends = _instant(schedule.get("end"), "UTC") or until
        return [(begins, ends)] if begins < until and ends > since else []
    tz = str(schedule.get("timezone") or zone or "UTC")
    found: list[Span] = []
    for recurrence in schedule["recurrences"]:
        length = durations.minutes(recurrence.get("duration"))
        if length is None:
            raise ValueError(f"the downtime duration {recurrence.get('duration')!r} is not a number of m, h, d or w")
        anchor = _instant(recurrence.get("start"), tz)
        local = anchor.astimezone(ZoneInfo(tz)).replace(tzinfo=None) if anchor is not None else None
        early = since - timedelta(minutes=length)
        for begins in starts(str(recurrence.get("rrule", "")), tz, early, until, local):
            if begins + timedelta(minutes=length) > since:
                found.append((begins, begins + timedelta(minutes=length)))
    return merged(found)


def merged(found: Sequence[Span]) -> list[Span]:
    out: list[Span] = []
    for begins, ends in sorted(found):
        if out and begins <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], ends))
        else:
            out.append((begins, ends))
    return out


def _instant(value: Any, zone: str) -> datetime | None:
    if not value:
        return None
    moment = datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    return moment.astimezone(UTC) if moment.tzinfo else moment.replace(tzinfo=ZoneInfo(zone)).astimezone(UTC)
