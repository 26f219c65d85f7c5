"""Pure: a replayed window of real history as a scenario: the series the queue's monitors read, in the scenario's
minutes (0: the window's start, the warm-up before it as history), and what the monitors did, as expectations a
person then edits to what on call needs."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from sync.core.backtest.compress import segments
from sync.core.backtest.replay import Replay, Replayed
from sync.core.evaluation.notify import Notification
from sync.core.evaluation.series import IDLE_MINUTES, Segment
from sync.core.evaluation.states import ALERT, Run

_First = Callable[[Run, tuple[Notification, ...]], "int | None"]  # a monitor's first event of one kind


@dataclass(frozen=True)
class Shape:
    """One recorded series in the scenario's minutes."""

    first: int  # the minute it starts: the warm-up before minute 0, as the scenario's `from`
    segments: tuple[Segment, ...]
    idle_before: bool  # no point in the first six hours: the queue wakes, and its first points come late (U7)


@dataclass(frozen=True)
class Expected:
    monitor: str  # a key below the environment, or `any`
    kind: str  # pages, alerts, warns_chat_only, notifies_none, pages_never
    within: int | None = None


@dataclass(frozen=True)
class Start:
    """The monitors already in ALERT when the window starts, and for how long the most recent has been."""

    alerting: tuple[str, ...]
    since: int


def shape(points: Mapping[int, float], warmup: int, duration: int) -> Shape:
    """`points` by the replay's minutes (0: the first fetched, `warmup` minutes before the window)."""
    moved = {minute - warmup: value for minute, value in points.items() if minute < warmup + duration}
    idle = bool(points) and min(points) >= IDLE_MINUTES  # as the backtest reads its history (readings._series)
    return Shape(-warmup, segments(moved, -warmup, duration), idle)


def expectations(replay: Replay, env: str) -> tuple[Expected, ...]:
    """Per monitor that paged, its first page at the latest of the readings; per monitor that reached ALERT
    without paging, its first alert; a warning that only reached chat; and when none of that happened, that
    nothing notified anyone (or, when something did, that nothing paged)."""
    warmup = replay.setup.warmup
    out: list[Expected] = []
    for item in replay.monitors:
        name = _name(item.key, env)
        if any(replay.paged(n) for n in item.sent):
            out.append(Expected(name, "pages", _latest(item, warmup, lambda run, sent: _first_page(replay, sent))))
        elif _first_alert(item.run, warmup) is not None:
            out.append(Expected(name, "alerts", _latest(item, warmup, lambda run, sent: _first_alert(run, warmup))))
        elif any(n.kind == "warning" and n.targets & replay.setup.audience.chat for n in item.sent):
            out.append(Expected(name, "warns_chat_only"))
    if not out:
        quiet = not any(item.sent for item in replay.monitors)
        out.append(Expected("any", "notifies_none" if quiet else "pages_never"))
    return tuple(out)


def start(replay: Replay, env: str) -> Start | None:
    """The monitors in ALERT at the window's start (after the warm-up), at the latest arrival."""
    warmup = replay.setup.warmup
    alerting = [item for item in replay.monitors if warmup and item.run.state_at(warmup - 1) == ALERT]
    if not alerting:
        return None
    since = min(warmup - _alerted(item.run, warmup) for item in alerting)
    return Start(tuple(_name(item.key, env) for item in alerting), since)


def _name(key: str, env: str) -> str:
    """The key below the environment: what a scenario names a monitor by, whatever its topic."""
    return key.removeprefix(f"{env}/")


def _latest(item: Replayed, warmup: int, first: _First) -> int:
    """The first event's minute in the window, at the latest of the readings that have one."""
    found = [t for run, sent in item.readings.values() if (t := first(run, sent)) is not None]
    shown = first(item.run, item.sent)
    return max(found or [shown if shown is not None else warmup]) - warmup


def _first_page(replay: Replay, sent: tuple[Notification, ...]) -> int | None:
    warmup = replay.setup.warmup
    return next((n.t for n in sent if n.t >= warmup and replay.paged(n)), None)


def _first_alert(run: Run, warmup: int) -> int | None:
    return next((t for t, _, now in run.changes if now == ALERT and t >= warmup), None)


def _alerted(run: Run, warmup: int) -> int:
    """The minute the monitor last went into ALERT before the window."""
    return max((t for t, _, now in run.changes if now == ALERT and t < warmup), default=0)
