"""Request pacing from Datadog's X-RateLimit-* headers, so that a large sync stays under the limit.

Each endpoint group has its own budget. Requests draw on the budget the last response reported (less what
is already in flight); once it is spent they wait for the window to reset instead of drawing a 429.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass


@dataclass
class _Budget:
    remaining: int
    resets_at: float


class Pacer:
    def __init__(self, clock: Callable[[], float], sleep: Callable[[float], None]) -> None:
        self._clock = clock
        self._sleep = sleep
        self._lock = threading.Lock()
        self._budgets: dict[str, _Budget] = {}
        self._in_flight: dict[str, int] = {}
        self.waited = 0.0  # seconds in which a request waited for a reset, for --verbose
        self._waiting_until = 0.0

    def acquire(self, group: str) -> None:
        """Block until a request in `group` fits in the current window."""
        while True:
            with self._lock:
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
                wait = budget.resets_at - now
                # Wall-clock time with some request held back: threads waiting together count once.
                self.waited += max(0.0, budget.resets_at - max(now, self._waiting_until))
                self._waiting_until = max(self._waiting_until, budget.resets_at)
            self._sleep(wait)

    def release(self, group: str, headers: Mapping[str, str] | None, *, limited: bool = False) -> None:
        """Record what the response said about the budget; after a 429 the next acquire waits for the reset."""
        remaining, reset = _budget_headers(headers or {})
        with self._lock:
            self._in_flight[group] = max(0, self._in_flight.get(group, 0) - 1)
            if limited:
                remaining = 0
                reset = max(reset or 0.0, 1.0)  # a 429 that says "now" must not make us spin
            if remaining is None or reset is None:
                return
            # Requests still in flight may not be counted in this answer yet: they draw on it too.
            left = max(0, remaining - self._in_flight[group])
            now = self._clock()
            budget = self._budgets.get(group)
            if budget is not None and now < budget.resets_at and not limited:
                # Answers arrive out of order: within a window the lowest count is the true one, and the
                # window ends when the first answer said (its reset is rounded up: never early).
                left = min(left, budget.remaining)
                reset = budget.resets_at - now
            self._budgets[group] = _Budget(left, now + reset)


def _budget_headers(headers: Mapping[str, str]) -> tuple[int | None, float | None]:
    lower = {k.lower(): v for k, v in headers.items()}
    try:
        remaining = int(lower["x-ratelimit-remaining"])
        reset = max(float(lower["x-ratelimit-reset"]), 0.0)
    except (KeyError, ValueError):
        return None, None
    return remaining, reset
