"""What can go wrong between the client and Datadog, drawn from one seeded generator."""

from __future__ import annotations

import random
import threading
from dataclasses import dataclass, field

LOST = 0  # a Targeted status: the write commits and the connection drops without an answer


@dataclass
class Targeted:
    """A fault for some requests only: those with this method whose path starts with `path` and whose body
    holds `holding`. Datadog refuses one SLO (a quota), or loses the answers to one monitor's creates."""

    method: str
    path: str
    holding: str = ""
    status: int = 400  # the answer; LOST: committed, then no answer at all
    error: str = "Refused"
    times: int | None = None  # how many matching requests it hits; None: every one


@dataclass
class Faults:
    """Mutable between test phases; every probability is drawn from random.Random(seed)."""

    latency: float = 0.0
    error_rate: float = 0.0
    timeout_rate: float = 0.0
    lost_response_rate: float = 0.0
    throttle_rate: float = 0.0
    proxy_page_rate: float = 0.0  # a proxy in front answers 502 with an HTML page in ISO-8859-1
    echo_headers: bool = False  # that page lists the request's headers, keys included
    late_commit_rate: float = 0.0  # a create hangs past the client's timeout, then commits anyway
    rate_limit: int | None = None
    rate_period: float = 10.0
    seed: int = 0
    timeout_seconds: float = 3.0
    targeted: list[Targeted] = field(default_factory=list)
    list_lag: float = 0.0  # seconds before a new monitor or SLO shows in its list (the API's index lags)
    _rng: random.Random = field(init=False, repr=False, compare=False)
    _lock: threading.Lock = field(init=False, repr=False, compare=False, default_factory=threading.Lock)

    def __post_init__(self) -> None:
        self._rng = random.Random(self.seed)

    def happens(self, rate: float) -> bool:
        # A zero rate draws nothing, so switching one fault off leaves the others' sequence unchanged.
        if rate <= 0:
            return False
        with self._lock:
            return self._rng.random() < rate

    def server_error(self) -> int:
        with self._lock:
            return self._rng.choice((500, 502, 503))

    def target(self, method: str, path: str, body: bytes) -> Targeted | None:
        """The targeted fault this request meets, if any (counting it against the fault's times)."""
        text = body.decode("utf-8", "replace")
        with self._lock:
            for fault in self.targeted:
                if fault.method == method and path.startswith(fault.path) and fault.holding in text:
                    if fault.times is not None:
                        if fault.times <= 0:
                            continue
                        fault.times -= 1
                    return fault
        return None
