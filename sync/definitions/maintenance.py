"""Maintenance windows of an environment: read from its file, checked with file:line errors.

A one-time window whose start has passed is valid data: while it lasts it renders what is left of its downtime,
and once over it renders nothing (`stale` tells `obs validate` to have it removed). Recurrences are checked by
the one recurrence engine (sync.core.recurrence). `now` is passed in so tests can fix the time.
"""

from __future__ import annotations

from collections.abc import Mapping, Set
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from sync.core import durations, recurrence
from sync.definitions.model import ALL, BURN_ALERTS, LIVE, Schedule, Window, maintenance_of
from sync.definitions.names import suggest
from sync.definitions.source import KeyPath, Source, read
from sync.errors import ObsError, Problems

if TYPE_CHECKING:
    from sync.definitions.model import Definitions

# Datadog takes the start and end of a recurrence from its own fields: these parts are refused in the RRULE.
_NOT_IN_RRULE = ("DTSTART", "DTEND", "DURATION")
_MAX_MINUTES = 7 * 1440  # a "maintenance" longer than a week is an outage to fix, not to mute
# The v2 spec documents no limit on a recurrence's duration, only its form (DowntimeScheduleRecurrenceDuration,
# https://docs.datadoghq.com/api/latest/downtimes/): obs's own week is the cap, for the window and its grace.
MAX_RENDERED_MINUTES = 7 * 1440


def windows(source: Source, now: datetime, problems: Problems) -> tuple[Window, ...]:
    """The windows an environment file declares (already checked against its schema); a window with a
    problem is left out, its problems kept in `problems`."""
    out: list[Window] = []
    for index, raw in enumerate(source.data.get("maintenance", ())):
        at: KeyPath = ("maintenance", index)
        if any(w.name == raw["name"] for w in out):
            problems.add(
                source.error((*at, "name"), f"maintenance window '{raw['name']}' is declared twice", "rename one")
            )
            continue
        schedule = problems.attempt(_schedule, source, (*at, "schedule"), raw["schedule"], now)
        if schedule is None:
            continue
        scope = raw.get("queues", "all")
        out.append(
            Window(
                name=raw["name"],
                description=str(raw.get("description", "")).strip(),
                schedule=schedule,
                queues=tuple(scope) if isinstance(scope, list) else None,
                cls=scope.get("class") if isinstance(scope, dict) else None,
                parking=tuple(raw.get("parking", ())),
                mutes=None if "mutes" not in raw else ALL if raw["mutes"] == "all" else tuple(raw["mutes"]),
                drain_minutes=raw.get("drain_minutes"),
                index=index,
            )
        )
    return tuple(out)


def _schedule(source: Source, at: KeyPath, raw: Mapping[str, Any], now: datetime) -> Schedule:
    if "rrule" in raw:
        timezone = _timezone(source, (*at, "timezone"), raw.get("timezone", "UTC"))
        minutes = _duration(source, (*at, "duration"), raw["duration"])
        rule = _rrule(source, (*at, "rrule"), raw["rrule"], timezone, now)
        clash = recurrence.collision(rule, timezone, minutes, 0, now)
        if clash is not None:
            raise source.error((*at, "duration"), _overlap(clash), "shorten the window or space out its occurrences")
        return Schedule(timezone=timezone, rrule=rule, minutes=minutes, now=now)
    start = _moment(source, (*at, "start"), raw["start"])
    end = _moment(source, (*at, "end"), raw["end"])
    if end <= start:
        raise source.error((*at, "end"), "the window ends before it starts", "set end after start")
    if (end - start).total_seconds() > _MAX_MINUTES * 60:
        raise source.error((*at, "end"), "the window lasts more than a week", "shorten it, or split it in two")
    return Schedule(start=start, end=end, now=now)


def _overlap(clash: tuple[datetime, datetime]) -> str:
    ends, begins = clash
    return (
        f"the window's occurrences overlap or touch (one lasts until {ends:%Y-%m-%d %H:%M} UTC, the next starts"
        f" {begins:%Y-%m-%d %H:%M} UTC): its monitors would never unmute"
    )


def _timezone(source: Source, at: KeyPath, name: str) -> str:
    try:
        ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        raise source.error(at, f"unknown time zone '{name}'", "use an IANA name such as Europe/Berlin or UTC") from None
    return name


def _duration(source: Source, at: KeyPath, text: str) -> int:
    minutes = durations.minutes(text)
    if minutes is None or minutes > _MAX_MINUTES:
        raise source.error(at, f"'{text}' is not a duration of at most a week", "write e.g. 90m, 2h or 1d")
    return minutes


def _rrule(source: Source, at: KeyPath, text: str, timezone: str, now: datetime) -> str:
    """The RRULE in Datadog's form: upper case, FREQ first, no RRULE: prefix; refused when it does not parse,
    repeats more often than hourly, leaves its time of day or days to when Datadog creates it, or never fires."""
    rule = str(text).strip().upper().removeprefix("RRULE:").strip(";")
    parts = [p for p in rule.split(";") if p]
    names = [p.split("=", 1)[0] for p in parts]
    bad = [n for n in names if n in _NOT_IN_RRULE]
    if bad:
        raise source.error(at, f"{bad[0]} is not allowed in the RRULE", "give the length as duration instead")
    if "FREQ" not in names:
        raise source.error(at, "the RRULE has no FREQ", "start it with FREQ=DAILY, FREQ=WEEKLY, ...")
    freq = parts[names.index("FREQ")]
    rule = ";".join([freq, *(p for p in parts if p != freq)])
    wrong = recurrence.problem(rule)
    if wrong is not None:
        raise source.error(at, *wrong)
    # Without UNTIL: a rule that has run its course stays valid data, as an ended one-time window does.
    unbounded = ";".join(p for p in rule.split(";") if not p.startswith("UNTIL="))
    day = recurrence.today(now)
    if not recurrence.starts(unbounded, timezone, day, day + timedelta(days=367)):
        raise source.error(at, "the RRULE has no occurrence in the next year", "check its BYMONTH and BYMONTHDAY")
    return rule


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


def check_grace(window: Window, grace: int, source: Source | None) -> None:
    """Refuse a recurrence whose occurrences plus the queue's drain grace (known once expanded) overlap, or
    whose downtime would be too long."""
    sched = window.schedule
    assert sched.rrule is not None
    at = ("maintenance", window.index, "schedule", "duration")
    since = sched.now or datetime(2026, 1, 1, tzinfo=UTC)
    clash = recurrence.collision(sched.rrule, sched.timezone, sched.minutes, grace, since)
    longest = max(length for _, length in recurrence.recurrences(sched.rrule, sched.timezone, sched.minutes, grace))
    what = fix = ""
    if clash is not None:
        what = (
            f"window '{window.name}': with {grace} min to drain after each occurrence it reaches the next one"
            f" ({clash[1]:%Y-%m-%d %H:%M} UTC): its monitors would never unmute"
        )
        fix = "shorten the window or its drain_minutes, or space out its occurrences"
    elif longest > MAX_RENDERED_MINUTES:
        what = f"window '{window.name}' would mute for {longest} min at a time, more than a week with its drain grace"
        fix = "shorten the window or its drain_minutes"
    if what:
        raise source.error(at, what, fix) if source is not None else ObsError.of(what, fix)


def stale(defs: Definitions) -> list[str]:
    """Warnings for one-time windows that ended more than a day before the definitions were loaded: they
    render nothing any more and only wait to be removed."""
    out = []
    for env in defs.environments:
        for window in env.maintenance:
            sched = window.schedule
            if sched.end is not None and sched.now is not None and sched.end + timedelta(days=1) < sched.now:
                at: KeyPath = ("maintenance", window.index, "schedule", "end")
                problem = env.source.error(
                    at, f"the one-time window '{window.name}' ended {sched.end:%Y-%m-%d %H:%M} UTC", "remove it"
                )
                out.append(problem.problems[0].render())
    return out


def names_in(folder: Path) -> dict[str, set[str]]:
    """Each environment's window names in a definitions folder, as written; what cannot be read has none."""
    out: dict[str, set[str]] = {}
    for path in sorted((folder / "environments").glob("*.y*ml")):
        try:
            data = read(path, path.name).data
        except ObsError:
            continue
        windows = data.get("maintenance") if isinstance(data, Mapping) else None
        if isinstance(data, Mapping) and isinstance(data.get("name"), str) and isinstance(windows, list):
            out[data["name"]] = {str(w.get("name")) for w in windows if isinstance(w, Mapping)}
    return out


def refuse_new_and_over(defs: Definitions, known: Mapping[str, set[str]]) -> None:
    """A one-time window the base lacks that is over already was added after its time: it would mute nothing.
    Every such window is reported at once."""
    problems = Problems()
    for env in defs.environments:
        for window in env.maintenance:
            sched = window.schedule
            new = window.name not in known.get(env.name, set())
            if new and sched.end is not None and sched.now is not None and sched.end <= sched.now:
                problems.add(
                    env.source.error(
                        ("maintenance", window.index, "schedule", "end"),
                        f"the one-time window '{window.name}' is new and already over (it ended "
                        f"{sched.end:%Y-%m-%d %H:%M} UTC; it is now {sched.now:%Y-%m-%d %H:%M} UTC)",
                        "give it times to come, or leave it out",
                    )
                )
    problems.raise_any()


def check(defs: Definitions, problems: Problems, failed_metrics: Set[str], failed_queues: Set[str]) -> None:
    """Names in each window's scope must exist: a typo would silently mute nothing. Names whose own
    definitions failed are not checked again."""
    metrics = {m.name for m in defs.metrics} | set(BURN_ALERTS) | set(failed_metrics)
    queues = {q.name for q in defs.queues} | set(failed_queues)
    for env in defs.environments:
        for window in env.maintenance:
            at: KeyPath = ("maintenance", window.index)
            for key, names in (("queues", window.queues or ()), ("parking", window.parking)):
                for index, name in enumerate(names):
                    if name not in queues:
                        problems.add(_unknown(env.source, (*at, key, index), "queue", name, queues))
            if window.cls is not None and window.cls not in defs.classes:
                problems.add(_unknown(env.source, (*at, "queues", "class"), "class", window.cls, set(defs.classes)))
            for index, name in enumerate(window.mutes if window.mutes not in (None, ALL) else ()):
                if name not in metrics:
                    problems.add(_unknown(env.source, (*at, "mutes", index), "metric", name, metrics))


_DECLARED_IN = {"queue": "queues.yaml", "class": "queues.yaml classes", "metric": "monitors/"}


def _unknown(source: Source, at: KeyPath, what: str, name: str, known: set[str]) -> ObsError:
    return source.error(at, f"unknown {what} '{name}' in the window's scope", suggest(name, known, _DECLARED_IN[what]))


def mutes(defs: Definitions, window: Window) -> tuple[str, ...]:
    """The metrics a window mutes: its own list (every one for `all`), else what the metric files declare."""
    if window.mutes == ALL:
        return tuple(maintenance_of(defs.metrics))
    return window.mutes if window.mutes is not None else mutes_by_default(defs)


def mutes_by_default(defs: Definitions) -> tuple[str, ...]:
    """Every monitor a window that names nothing mutes: each metric not declared live, and the SLO burn alerts."""
    return tuple(name for name, treatment in maintenance_of(defs.metrics).items() if treatment != LIVE)
