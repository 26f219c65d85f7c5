"""Maintenance windows of an environment: read from its file, checked with file:line errors.

A one-time window must lie in the future when the definitions are loaded: Datadog would start a downtime
whose start has passed at once, muting monitors nobody meant to mute now. `now` is passed in so tests can
fix the time.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from dateutil.rrule import rrulestr

from sync.definitions.model import BURN_ALERTS, LIVE, Schedule, Window, maintenance_of
from sync.definitions.references import suggest
from sync.definitions.source import KeyPath, Source
from sync.errors import ObsError

if TYPE_CHECKING:
    from sync.definitions.model import Definitions

_DURATION = re.compile(r"^([1-9][0-9]*)([mhdw])$")
_MINUTES = {"m": 1, "h": 60, "d": 1440, "w": 10080}
# Datadog takes the start and end of a recurrence from its own fields: these parts are refused in the RRULE.
_NOT_IN_RRULE = ("DTSTART", "DTEND", "DURATION")
_MAX_MINUTES = 7 * 1440  # a "maintenance" longer than a week is an outage to fix, not to mute


def windows(source: Source, now: datetime) -> tuple[Window, ...]:
    """The windows an environment file declares (already checked against its schema)."""
    out: list[Window] = []
    for index, raw in enumerate(source.data.get("maintenance", ())):
        at: KeyPath = ("maintenance", index)
        if any(w.name == raw["name"] for w in out):
            raise source.error((*at, "name"), f"maintenance window '{raw['name']}' is declared twice", "rename one")
        scope = raw.get("queues", "all")
        out.append(
            Window(
                name=raw["name"],
                description=str(raw.get("description", "")).strip(),
                schedule=_schedule(source, (*at, "schedule"), raw["schedule"], now),
                queues=tuple(scope) if isinstance(scope, list) else None,
                cls=scope.get("class") if isinstance(scope, dict) else None,
                parking=tuple(raw.get("parking", ())),
                mutes=tuple(raw["mutes"]) if "mutes" in raw else None,
                drain_minutes=raw.get("drain_minutes"),
                index=index,
            )
        )
    return tuple(out)


def _schedule(source: Source, at: KeyPath, raw: Mapping[str, Any], now: datetime) -> Schedule:
    if "rrule" in raw:
        timezone = _timezone(source, (*at, "timezone"), raw.get("timezone", "UTC"))
        return Schedule(
            timezone=timezone,
            rrule=_rrule(source, (*at, "rrule"), raw["rrule"]),
            minutes=_duration(source, (*at, "duration"), raw["duration"]),
        )
    start = _moment(source, (*at, "start"), raw["start"])
    end = _moment(source, (*at, "end"), raw["end"])
    if start <= now:
        raise source.error(
            (*at, "start"),
            f"the one-time window starts in the past ({start:%Y-%m-%d %H:%M} UTC; it is now {now:%Y-%m-%d %H:%M} UTC)",
            "move it to the future, or remove it once it has run (for unplanned work: obs maintenance start)",
        )
    if end <= start:
        raise source.error((*at, "end"), "the window ends before it starts", "set end after start")
    if (end - start).total_seconds() > _MAX_MINUTES * 60:
        raise source.error((*at, "end"), "the window lasts more than a week", "shorten it, or split it in two")
    return Schedule(start=start, end=end)


def _timezone(source: Source, at: KeyPath, name: str) -> str:
    try:
        ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        raise source.error(at, f"unknown time zone '{name}'", "use an IANA name such as Europe/Berlin or UTC") from None
    return name


def _duration(source: Source, at: KeyPath, text: str) -> int:
    found = _DURATION.match(str(text))
    minutes = int(found.group(1)) * _MINUTES[found.group(2)] if found else 0
    if not found or minutes > _MAX_MINUTES:
        raise source.error(at, f"'{text}' is not a duration of at most a week", "write e.g. 90m, 2h or 1d")
    return minutes


def _rrule(source: Source, at: KeyPath, text: str) -> str:
    """The RRULE in Datadog's form: upper case, FREQ first, no RRULE: prefix; refused when it does not parse."""
    rule = str(text).strip().upper().removeprefix("RRULE:").strip(";")
    parts = [p for p in rule.split(";") if p]
    names = [p.split("=", 1)[0] for p in parts]
    bad = [n for n in names if n in _NOT_IN_RRULE]
    if bad:
        raise source.error(at, f"{bad[0]} is not allowed in the RRULE", "give the length as duration instead")
    try:
        rrulestr(rule, dtstart=datetime(2000, 1, 1))
    except (ValueError, TypeError) as exc:
        raise source.error(
            at, f"the RRULE does not parse ({exc})", "write e.g. FREQ=DAILY;BYHOUR=1;BYMINUTE=0"
        ) from None
    if "FREQ" not in names:
        raise source.error(at, "the RRULE has no FREQ", "start it with FREQ=DAILY, FREQ=WEEKLY, ...")
    freq = parts[names.index("FREQ")]
    return ";".join([freq, *(p for p in parts if p != freq)])


def _moment(source: Source, at: KeyPath, value: Any) -> datetime:
    """A UTC time, written in YAML either as a timestamp or as an ISO 8601 string, with its offset."""
    moment = value
    if isinstance(value, str):
        try:
            moment = datetime.fromisoformat(value)
        except ValueError:
            moment = None
    if not isinstance(moment, datetime) or moment.tzinfo is None:
        raise source.error(at, f"'{value}' is not a time with a UTC offset", "write e.g. 2027-01-10T01:00:00Z")
    return moment.astimezone(UTC)


def check(defs: Definitions) -> None:
    """Names in each window's scope must exist: a typo would silently mute nothing."""
    metrics = {m.name for m in defs.metrics} | set(BURN_ALERTS)
    queues = {q.name for q in defs.queues}
    for env in defs.environments:
        for window in env.maintenance:
            at: KeyPath = ("maintenance", window.index)
            for key, names in (("queues", window.queues or ()), ("parking", window.parking)):
                for index, name in enumerate(names):
                    if name not in queues:
                        raise _unknown(env.source, (*at, key, index), "queue", name, queues)
            if window.cls is not None and window.cls not in defs.classes:
                raise _unknown(env.source, (*at, "queues", "class"), "class", window.cls, set(defs.classes))
            for index, name in enumerate(window.mutes or ()):
                if name not in metrics:
                    raise _unknown(env.source, (*at, "mutes", index), "metric", name, metrics)


_DECLARED_IN = {"queue": "queues.yaml", "class": "queues.yaml classes", "metric": "monitors/"}


def _unknown(source: Source, at: KeyPath, what: str, name: str, known: set[str]) -> ObsError:
    return source.error(at, f"unknown {what} '{name}' in the window's scope", suggest(name, known, _DECLARED_IN[what]))


def mutes(defs: Definitions, window: Window) -> tuple[str, ...]:
    """The metrics a window mutes: its own list, else what the metric files declare."""
    return window.mutes if window.mutes is not None else mutes_by_default(defs)


def mutes_by_default(defs: Definitions) -> tuple[str, ...]:
    """Every monitor a window that names nothing mutes: each metric not declared live, and the SLO burn alerts."""
    return tuple(name for name, treatment in maintenance_of(defs.metrics).items() if treatment != LIVE)
