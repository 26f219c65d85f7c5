"""Pure: who hears about a monitor's run: state-change notifications, renotifications and downtimes
(https://docs.datadoghq.com/monitors/notify/ and https://docs.datadoghq.com/monitors/downtimes/)."""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sync.core import paging
from sync.core.evaluation import notes
from sync.core.evaluation.states import ALERT, ALERT_WORTHY, NO_DATA, OK, WARN, Run

_STATUS = {"alert": ALERT, "warn": WARN, "no data": NO_DATA}
_END_STATE = {state: name for name, state in _STATUS.items()}


@dataclass(frozen=True)
class MuteWindow:
    """A downtime: minutes [start, end), for monitors carrying every tag of `monitor_tags` (`*`: all), or the
    one monitor `monitor_key`; `scope` is its group scope."""

    start: int
    end: int
    monitor_tags: tuple[str, ...] = ("*",)
    monitor_key: str | None = None
    scope: str = "*"
    mute_first_recovery_notification: bool = False
    end_states: tuple[str, ...] = ("alert", "warn", "no data")  # states that notify when it expires
    notify_on_expiry: bool = True

    def targets(self, key: str, tags: Collection[str], used: set[notes.Assumption]) -> bool:
        if self.monitor_key is not None:
            hit = self.monitor_key == key
        else:
            hit = self.monitor_tags == ("*",) or all(tag in tags for tag in self.monitor_tags)
        if hit and self.scope != "*":
            used.add(notes.DOWNTIME_SCOPE)
            return False  # U18: a group scope is assumed not to mute a monitor without groups
        return hit


@dataclass(frozen=True)
class Notification:
    t: int
    kind: str  # alert, warning, no_data, recovery, renotify, downtime_end
    state: str
    targets: frozenset[str]
    muted: bool = False


def notifications(
    run: Run,
    body: Mapping[str, Any],
    mutes: Sequence[MuteWindow],
    duration: int,
    used: set[notes.Assumption],
    shortcuts: bool = True,
) -> tuple[Notification, ...]:
    """`shortcuts=False` walks every minute, as the shortcut is tested equal to."""
    routes = paging.sections(str(body.get("message", "")))
    options: Mapping[str, Any] = body.get("options") or {}
    tags = tuple(body.get("tags") or ())
    mine = [m for m in mutes if m.targets(run.key, tags, used)]
    interval = int(options.get("renotify_interval") or 0)
    statuses = {_STATUS[s] for s in options.get("renotify_statuses") or ("alert", "no data") if s in _STATUS}
    occurrences = options.get("renotify_occurrences")
    if interval:
        used.add(notes.RENOTIFY)
    if shortcuts and not mine and not interval:
        # Nothing mutes it and nothing repeats: it notifies at its state changes alone, and only they need reading
        # (a replay's monitor has tens of thousands of minutes and a few changes).
        said = [(t, new, _change(routes, old, new, run.notify_no_data)) for t, old, new in run.changes]
        return tuple(Notification(t, kind, new, targets) for t, new, (kind, targets) in said if kind)
    out: list[Notification] = []
    state, clock, repeats, began = _started(run, interval, occurrences)
    for t in range(duration + 1):
        new = run.state_at(t)
        window = next((m for m in mine if m.start <= t < m.end), None)
        ended = [m for m in mine if m.end == t and m.notify_on_expiry and _END_STATE.get(new) in m.end_states]
        # On expiry an alert-worthy state notifies again, whenever it arose; a reminder the downtime held back
        # and that falls due at the same minute is that notification, not a second one.
        expired = bool(ended) and window is None and _notifies(new, run.notify_no_data)
        if new != state:
            kind, targets = _change(routes, state, new, run.notify_no_data)
            if kind:
                # A recovery inside a downtime from an alert that began before it is still sent.
                early = new == OK and window is not None and began < window.start
                muted = window is not None and not (early and not window.mute_first_recovery_notification)
                out.append(Notification(t, kind, new, targets, muted))
            began = t if new in ALERT_WORTHY and state not in ALERT_WORTHY else began
            state, clock, repeats = new, t, 0
        elif not expired and _due(interval, clock, t, window is None and state in statuses, occurrences, repeats):
            out.append(Notification(t, "renotify", state, _state_targets(routes, state)))
            clock, repeats = t, repeats + 1
        if expired:
            out.append(Notification(t, "downtime_end", state, _state_targets(routes, state)))
            clock = t
    return tuple(out)


def _started(run: Run, interval: int, occurrences: int | None) -> tuple[str, int | None, int, int]:
    """(state, minute of the last notification, renotifications sent, minute the alert began) at minute 0. A
    monitor alerting since before the scenario was notified then, and renotified every interval since."""
    state, since = run.start.state, run.start.since
    if state not in ALERT_WORTHY:
        return state, None, 0, 0
    repeats = max(since - 1, 0) // interval if interval else 0  # one falling due at minute 0 is the scenario's
    if occurrences is not None:
        repeats = min(repeats, occurrences)  # ran out before the scenario: the clock stays at the last one sent
    return state, -since + repeats * interval, repeats, -since


def _due(interval: int, clock: int | None, t: int, allowed: bool, occurrences: int | None, repeats: int) -> bool:
    """A renotification is due `interval` minutes after the last notification, outside downtimes (U15)."""
    if not interval or clock is None or not allowed or t - clock < interval:
        return False
    return occurrences is None or repeats < occurrences


def _notifies(state: str, notify_no_data: bool) -> bool:
    return state in (ALERT, WARN) or (state == NO_DATA and notify_no_data)


def _state_targets(routes: Mapping[str, frozenset[str]], state: str) -> frozenset[str]:
    severity = {ALERT: "alert", WARN: "warning", NO_DATA: "no_data"}.get(state, "recovery")
    return routes.get(severity, frozenset()) | routes.get(paging.ALWAYS, frozenset())


def _change(
    routes: Mapping[str, frozenset[str]], before: str, after: str, notify_no_data: bool
) -> tuple[str, frozenset[str]]:
    always = routes.get(paging.ALWAYS, frozenset())
    if after == NO_DATA:
        return ("no_data", routes.get("no_data", frozenset()) | always) if notify_no_data else ("", frozenset())
    if after == OK:
        if not _notifies(before, notify_no_data):
            return "", frozenset()
        extra = {ALERT: "alert_recovery", WARN: "warning_recovery"}.get(before, "")
        return "recovery", routes.get("recovery", frozenset()) | routes.get(extra, frozenset()) | always
    if after == WARN and before == ALERT:
        stepped = _state_targets(routes, WARN) - routes.get(paging.SKIPS_STEP_DOWN, frozenset())
        return "warning", stepped | routes.get("alert_to_warning", frozenset())
    return ("alert" if after == ALERT else "warning"), _state_targets(routes, after)
