"""Pure: the SLO corrections a plan adds, moves or removes, in words, beside the windows' downtimes.

`window nightly-migrations corrects the SLO of default: daily at 01:00 for 3 h 2 min, Europe/Berlin time`:
the minutes the queue's SLO counts as good, whatever it measures then.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any
from zoneinfo import ZoneInfo

from sync.core.downtimes import schedule_words
from sync.core.durations import text as duration
from sync.core.keys import Key
from sync.core.kinds import SLO_CORRECTION
from sync.core.plan import Action, Plan

# What decides which minutes a correction covers: a change elsewhere (its description) corrects nothing new.
_TIMING = ("start", "end", "duration", "rrule", "timezone")
_SLO = "slo"  # the part of a correction's key env/queue/slo/maintenance/window


def correction_lines(plan: Plan) -> list[str]:
    found = []
    for change in plan.pending:
        key = Key.parse(change.key)
        held = key.maintenance if key is not None else None
        if change.kind != SLO_CORRECTION or held is None or held[1] != _SLO:
            continue
        queue, _, window = held
        if change.action == Action.DELETE:
            found.append((window, queue, f"window {window} no longer corrects the SLO of {queue}"))
            continue
        if change.action == Action.UPDATE and not any(f.path in _TIMING for f in change.fields):
            continue
        verb = "corrects" if change.action == Action.CREATE else "now corrects"
        when = timing_words(change.body or {})
        found.append((window, queue, f"window {window} {verb} the SLO of {queue}: {when}"))
    return [line for _, _, line in sorted(found)]


def timing_words(body: Mapping[str, Any]) -> str:
    """`daily at 01:00 for 3 h 2 min, Europe/Berlin time`, or `once, 2027-01-10 01:00 to 2027-01-10 04:02 UTC`."""
    start = body.get("start")
    if not isinstance(start, int):
        return "at a time not known yet"
    if not body.get("rrule"):
        end = body.get("end")
        return schedule_words({"start": _utc(start), "end": _utc(end) if isinstance(end, int) else None})
    zone = str(body.get("timezone") or "UTC")
    local = datetime.fromtimestamp(start, ZoneInfo(zone))
    rule = f"{body['rrule']};BYHOUR={local.hour};BYMINUTE={local.minute}"
    minutes = int(body.get("duration") or 0) // 60
    return schedule_words({"recurrences": [{"rrule": rule, "duration": duration(minutes)}], "timezone": zone})


def _utc(seconds: int) -> str:
    return datetime.fromtimestamp(seconds, UTC).isoformat()
