"""Pure: monitor states and a monitor's run over the scenario, shared by metric and composite monitors."""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import NamedTuple

from sync.core.evaluation.window import Outcome

OK, WARN, ALERT, NO_DATA = "OK", "WARN", "ALERT", "NO DATA"
ALERT_WORTHY = frozenset({ALERT, WARN, NO_DATA})
# ALERT > WARN > NO DATA > OK: https://docs.datadoghq.com/monitors/types/composite/
SEVERITY = {OK: 1, NO_DATA: 2, WARN: 3, ALERT: 4}


class Step(NamedTuple):
    """One evaluation: what it saw and the state it left the monitor in (a tuple, as Outcome is)."""

    t: int
    state: str
    outcome: Outcome | None = None  # None for a composite
    note: str = ""


@dataclass(frozen=True)
class Start:
    """Where a scenario that starts mid-story finds a monitor at minute 0: its state, and how many minutes it has
    held it (its alert went out then, so a renotification falls due on that clock)."""

    state: str = OK
    since: int = 0


FRESH = Start()


Change = tuple[int, str, str]  # (minute, state before, state after)


def recorded(walk: Callable[[list[Step]], object]) -> Callable[[], tuple[Step, ...]]:
    """A run's `explain`: its walk again, recording each evaluation's step."""

    def explain() -> tuple[Step, ...]:
        steps: list[Step] = []
        walk(steps)
        return tuple(steps)

    return explain


@dataclass(frozen=True)
class Run:
    """A monitor's evaluations over the scenario: when its state changed, and how it notifies. What each evaluation
    saw (its steps) is worked out again only when a report shows it: a run is read for its changes, and a minute
    by minute record of every run took a third of `obs test`'s time."""

    key: str
    changes: tuple[Change, ...]  # in minute order
    notify_no_data: bool
    start: Start = FRESH
    explain: Callable[[], tuple[Step, ...]] = field(default=tuple, compare=False, repr=False)

    @classmethod
    def of(cls, key: str, steps: Sequence[Step], notify_no_data: bool, start: Start = FRESH) -> Run:
        """A run from its evaluations, in minute order."""
        changes, state = [], start.state
        for step in steps:
            if step.state != state:
                changes.append((step.t, state, step.state))
                state = step.state
        kept = tuple(steps)
        return cls(key, tuple(changes), notify_no_data, start, lambda: kept)

    @cached_property
    def steps(self) -> tuple[Step, ...]:
        return self.explain()

    @cached_property
    def _times(self) -> list[int]:
        return [t for t, _, _ in self.changes]

    def state_at(self, t: int) -> str:
        """The state after the last evaluation at or before minute t (the starting state before the first)."""
        index = bisect_right(self._times, t)
        return self.changes[index - 1][2] if index else self.start.state
