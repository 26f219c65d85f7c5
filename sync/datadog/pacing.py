"""Request pacing from Datadog's X-RateLimit-* headers, so that a large sync stays under the limit.

Each endpoint group has its own budget. Requests draw on the budget the last response reported (less what
is already in flight); once it is spent they wait for the answers in flight, which say exactly how much is
left, and then for the window to reset, instead of drawing a 429.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass


class Halted(Exception):
    """A request held back was let go unsent: the waits were cut (Pacer.halt), its answer is no longer wanted."""


@dataclass
class _Budget:
    remaining: int  # what we may still send in this window, never more than the server allows
    resets_at: float
    reported: int  # the lowest count an answer reported in this window


class Pacer:
    def __init__(self, clock: Callable[[], float], sleep: Callable[[float], object]) -> None:
        """`sleep`: a wait that `halt` must be able to end early, when it is cut short at all (an Event's)."""
        self._clock = clock
        self._sleep = sleep
        self._halted = False
        self._lock = threading.Condition()
        self._budgets: dict[str, _Budget] = {}
        self._in_flight: dict[str, int] = {}
        self.waited = 0.0  # wall-clock seconds in which some request was held back, for --verbose
        self._held = 0  # requests held back now
        self._held_since = 0.0

    def acquire(self, group: str) -> None:
        """Block until a request in `group` fits in the current window; Halted when the waits are cut."""
        with self._lock:
            while True:
                if self._halted:
                    raise Halted
                budget = self._budgets.get(group)
                now = self._clock()
                if budget is None or now >= budget.resets_at:
                    self._budgets.pop(group, None)  # a new window: unknown until the next response says
                    self._in_flight[group] = self._in_flight.get(group, 0) + 1
                    return
                if budget.remaining > 0:
                    budget.remaining -= 1
                    self._in_flight[group] = self._in_flight.get(group, 0) + 1
                    return
                self._hold(now)
                try:
                    if self._in_flight.get(group, 0) > 0:
                        # The estimate counts requests in flight that the server may have counted already:
                        # their answers tell, and may leave room in this window.
                        self._lock.wait(budget.resets_at - now)
                    else:
                        self._lock.release()
                        try:
                            self._sleep(budget.resets_at - now)
                        finally:
                            self._lock.acquire()
                finally:
                    self._unhold()

    def halt(self, halted: bool) -> None:
        """While halted, every request asking to go raises Halted, one held back included (the caller ends a
        sleep it gave as `sleep` itself)."""
        with self._lock:
            self._halted = halted
            self._lock.notify_all()

    def _hold(self, now: float) -> None:
        if self._held == 0:
            self._held_since = now
        self._held += 1

    def _unhold(self) -> None:
        """Requests held back together count once."""
        self._held -= 1
        if self._held == 0:
            self.waited += self._clock() - self._held_since

    def release(self, group: str, headers: Mapping[str, str] | None, *, limited: bool = False) -> None:
        """Record what the response said about the budget; after a 429 the next acquire waits for the reset."""
        remaining, reset = _budget_headers(headers or {})
        with self._lock:
            self._in_flight[group] = max(0, self._in_flight.get(group, 0) - 1)
            self._lock.notify_all()  # a request held back for this answer may go, or wait for the reset
            if limited:
                remaining = 0
                reset = max(reset or 0.0, 1.0)  # a 429 that says "now" must not make us spin
            if remaining is None or reset is None:
                return
            # Requests still in flight may not be counted in this answer yet: they draw on it too.
            in_flight = self._in_flight[group]
            left = max(0, remaining - in_flight)
            now = self._clock()
            budget = self._budgets.get(group)
            if budget is not None and now < budget.resets_at and not limited:
                # Answers arrive out of order: within a window the lowest count is the true one, and the
                # window ends when the first answer said (its reset is rounded up: never early). With
                # nothing in flight every request of the window is counted in it: it is exact.
                remaining = min(remaining, budget.reported)
                left = remaining if in_flight == 0 else min(left, budget.remaining)
                reset = budget.resets_at - now
            self._budgets[group] = _Budget(left, now + reset, remaining)


def _budget_headers(headers: Mapping[str, str]) -> tuple[int | None, float | None]:
    lower = {k.lower(): v for k, v in headers.items()}
    try:
        remaining = int(lower["x-ratelimit-remaining"])
        reset = max(float(lower["x-ratelimit-reset"]), 0.0)
    except (KeyError, ValueError):
        return None, None
    return remaining, reset
