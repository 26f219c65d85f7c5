"""Per-group request budgets in fixed windows aligned to the server's start, with Datadog's headers."""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable

from .faults import Faults

# What X-RateLimit-Limit says when the test set no limit.
UNLIMITED = 1_000_000


class RateLimiter:
    def __init__(self, faults: Callable[[], Faults], clock: Callable[[], float] = time.monotonic) -> None:
        self._faults = faults
        self._clock = clock
        self._start = clock()
        self._used: dict[str, tuple[int, int]] = {}  # group -> (window number, requests counted in it)
        self._lock = threading.Lock()

    def take(self, group: str, count: bool = True) -> tuple[bool, dict[str, str]]:
        """Whether one more request of the group fits its budget (counting it if asked), and the headers to send."""
        with self._lock:
            faults = self._faults()
            period = faults.rate_period
            limit = UNLIMITED if faults.rate_limit is None else faults.rate_limit
            elapsed = self._clock() - self._start
            window = int(elapsed // period)
            seen, used = self._used.get(group, (window, 0))
            used = used if seen == window else 0
            allowed = used < limit
            if count and allowed:
                used += 1
            self._used[group] = (window, used)
            # Whole seconds, rounded up, so a client that sleeps this long always lands in a fresh window.
            reset = max(1, math.ceil((window + 1) * period - elapsed))
        return allowed, {
            "X-RateLimit-Limit": str(limit),
            "X-RateLimit-Period": f"{period:g}",
            "X-RateLimit-Remaining": str(max(0, limit - used)),
            "X-RateLimit-Reset": str(reset),
            "X-RateLimit-Name": group,
        }
