"""Pure: Datadog's monitor alert events (the v2 event search's EventResponse objects) as the monitors' real state
transitions, on the replay's minutes.

What state an event says the monitor entered, the first of these that answers (the table in docs/backtest.md,
Calibration, gives each one's source):
1. `attributes.attributes.monitor.transition.destination_state`: `Alert`, `Warn`, `OK`, `No Data` (the events
   Datadog returns for monitors carry it; the published MonitorType schema does not list it);
2. the title's leading `[...]` (a priority such as `[P1]` skipped, `on {group}` of a multi alert ignored):
   `Triggered`, `Warn`, `Recovered`, `No Data`; `Re-Triggered`, `Re-Warn` and the like are renotifications;
3. `attributes.attributes.status` (EventStatusType): `error`, `warning`, `success`.

The state left comes from `transition.source_state` where the event has it. An event that says none of these,
or repeats the state the monitor is already in, is no transition."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from sync.core.backtest.calibration import Transition
from sync.core.evaluation.states import ALERT, NO_DATA, OK, WARN

_DESTINATION = {"alert": ALERT, "warn": WARN, "ok": OK, "no data": NO_DATA}
_TITLE = {"triggered": ALERT, "warn": WARN, "recovered": OK, "no data": NO_DATA}
_STATUS = {"error": ALERT, "warning": WARN, "success": OK}
_BRACKETS = re.compile(r"\[([^\]]*)\]")  # "[P1] [Triggered on {queuename:a}] Title": each leading [...]


@dataclass(frozen=True)
class Event:
    monitor_id: int
    at: datetime
    state: str | None  # None: the event is no transition (a renotification, or unreadable)
    before: str | None


def read(event: Mapping[str, Any]) -> Event | None:
    """A monitor event's monitor, time and state; None for an event of no monitor."""
    outer = event.get("attributes") or {}
    inner = outer.get("attributes") or {}
    monitor = inner.get("monitor") or {}
    found = inner.get("monitor_id") or monitor.get("id")
    at = _time(inner.get("timestamp"), outer.get("timestamp"))
    if not isinstance(found, int) or at is None:
        return None
    transition = monitor.get("transition") or {}
    state = _DESTINATION.get(str(transition.get("destination_state") or "").lower())
    if state is None:
        state = _from_title(str(inner.get("title") or event.get("title") or ""))
    if state is None and not _renotified(str(inner.get("title") or "")):
        state = _STATUS.get(str(inner.get("status") or ""))
    before = _DESTINATION.get(str(transition.get("source_state") or "").lower())
    if state is not None and state == before:
        state = None  # Datadog says it stayed: a renotification
    return Event(found, at, state, before)


def transitions(
    events: Iterable[Event], keys: Mapping[int, str], origin: datetime
) -> dict[str, tuple[Transition, ...]]:
    """Each monitor's (by key) real transitions in time order, on minutes from `origin`; events of monitors
    not in `keys`, and events that are no transition, are left out."""
    by_key: dict[str, list[Event]] = {}
    for event in events:
        if event.state is not None and event.monitor_id in keys:
            by_key.setdefault(keys[event.monitor_id], []).append(event)
    out: dict[str, tuple[Transition, ...]] = {}
    for key, found in sorted(by_key.items()):
        kept: list[Transition] = []
        for event in sorted(found, key=lambda e: e.at):
            state = event.state or ""
            if kept and kept[-1].state == state:
                continue  # the state it is in already: a repeat, or another group's
            minute = int((event.at - origin) // timedelta(minutes=1))
            kept.append(Transition(minute, state, event.before or (kept[-1].state if kept else None)))
        out[key] = tuple(kept)
    return out


def _from_title(title: str) -> str | None:
    for label in _leading(title):
        word = label.split(" on ", 1)[0].strip().lower()
        if word in _TITLE:
            return _TITLE[word]
    return None


def _renotified(title: str) -> bool:
    return any(label.strip().lower().startswith("re-") for label in _leading(title))


def _leading(title: str) -> list[str]:
    labels = []
    rest = title.lstrip()
    while (found := _BRACKETS.match(rest)) is not None:
        labels.append(found.group(1))
        rest = rest[found.end() :].lstrip()
    return labels


def _time(millis: object, text: object) -> datetime | None:
    if isinstance(millis, int) and not isinstance(millis, bool):
        return datetime.fromtimestamp(millis / 1000, UTC)
    if isinstance(text, str):
        try:
            moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
        except ValueError:
            return None
        return moment if moment.tzinfo else moment.replace(tzinfo=UTC)
    return None
