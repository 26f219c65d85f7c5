"""Pure: SLO corrections (API v1 bodies) as the corrected minutes of a scenario: a time-slice SLO counts
corrected time as uptime (https://docs.datadoghq.com/service_level_objectives/time_slice/)."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from dateutil.rrule import rrulestr

from sync.core.evaluation.notes import Refused

Span = tuple[int, int]  # minutes [start, end) of the scenario
_SLO_REF = re.compile(r"^\$\{slo_id:([^}]+)\}$")


def corrected(bodies: Iterable[Mapping[str, Any]], starts_at: datetime, duration: int) -> dict[str, tuple[Span, ...]]:
    """Per SLO (its key, or its ID where the body names no placeholder), the corrected minutes of a scenario
    whose minute 0 is `starts_at` (timezone-aware) and which lasts `duration` minutes."""
    found: dict[str, list[Span]] = {}
    for body in bodies:
        ref = str(body.get("slo_id") or "")
        named = _SLO_REF.match(ref)
        found.setdefault(named.group(1) if named else ref, []).extend(spans(body, starts_at, duration))
    return {slo: tuple(sorted(s)) for slo, s in found.items()}


def spans(body: Mapping[str, Any], starts_at: datetime, duration: int) -> list[Span]:
    """The correction's stretches that overlap the scenario, in its minutes."""
    start = body.get("start")
    if not isinstance(start, int):
        raise Refused("the SLO correction has no start in epoch seconds")

    def minute(moment: datetime) -> int:
        return int((moment - starts_at).total_seconds() // 60)

    until = starts_at + timedelta(minutes=duration + 1)
    if not body.get("rrule"):
        end = body.get("end")
        if not isinstance(end, int):
            raise Refused("a one-time SLO correction needs an end in epoch seconds")
        found = [(minute(datetime.fromtimestamp(start, UTC)), minute(datetime.fromtimestamp(end, UTC)))]
        return [(max(a, 0), b) for a, b in found if b > 0 and a <= duration]
    length = timedelta(seconds=int(body.get("duration") or 0))
    zone = ZoneInfo(str(body.get("timezone") or "UTC"))
    first = datetime.fromtimestamp(start, zone)
    try:
        # Occurrences in wall-clock time of the zone (T3), from one that may still last at minute 0.
        occurrences = _between(str(body["rrule"]), first, starts_at - length, until)
    except (ValueError, TypeError) as exc:
        raise Refused(f"the SLO correction's rrule does not parse ({exc})") from None
    out = []
    for local in occurrences:
        begins = local.astimezone(UTC)  # the duration is seconds of real time, across a clock change too
        a, b = minute(begins), minute(begins + length)
        if b > 0:
            out.append((max(a, 0), b))
    return out


def _between(rule: str, first: datetime, since: datetime, until: datetime) -> list[datetime]:
    """The rule's starts in [since, until]; an UNTIL without offset is local time, so the rule runs naive."""
    if "UNTIL=" not in rule or rule.split("UNTIL=", 1)[1].split(";", maxsplit=1)[0].endswith("Z"):
        return list(rrulestr(rule, dtstart=first).between(since, until, inc=True))
    zone = first.tzinfo

    def local(moment: datetime) -> datetime:
        return moment.astimezone(zone).replace(tzinfo=None)

    naive = rrulestr(rule, dtstart=first.replace(tzinfo=None)).between(local(since), local(until), inc=True)
    return [moment.replace(tzinfo=zone) for moment in naive]
