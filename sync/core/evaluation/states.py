"""Pure: monitor states and a monitor's run over the scenario, shared by metric and composite monitors."""

from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass
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


@dataclass(frozen=True)
class Run:
    """A monitor's evaluations over the scenario, in minute order, and how it notifies."""

    key: str
    steps: tuple[Step, ...]
    notify_no_data: bool
    start: Start = FRESH

    @cached_property
    def _times(self) -> list[int]:
        return [step.t for step in self.steps]

    def state_at(self, t: int) -> str:
        """The state after the last evaluation at or before minute t (the starting state before the first)."""
        index = bisect_right(self._times, t)
        return self.steps[index - 1].state if index else self.start.state

    def transitions(self) -> list[tuple[int, str, str]]:
        out = []
        state = self.start.state
        for step in self.steps:
            if step.state != state:
                out.append((step.t, state, step.state))
                state = step.state
        return out
