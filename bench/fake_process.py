"""The fake Datadog in a process of its own, so that its HTTP handling and JSON encoding do not take the
interpreter (and its lock) from the obs being measured; the benchmark drives it over a pipe."""

from __future__ import annotations

import multiprocessing
import time
from collections.abc import Callable, Mapping, Sequence
from multiprocessing.connection import Connection
from typing import Any

from tests.fakedd import FakeDatadog, Faults, Request

Body = Mapping[str, Any]


# Each kind's create as a person in the UI makes it (by the kind's name): the fake's checks and rewrites, no HTTP.
_CREATES: dict[str, Callable[[FakeDatadog, Body], Body]] = {
    "slo": lambda dd, body: dd.create_slo(dict(body)),
    "dashboard": lambda dd, body: dd.create_dashboard(dict(body)),
    "monitor": lambda dd, body: dd.create_monitor(dict(body)),
    "composite": lambda dd, body: dd.create_monitor(dict(body)),
    "downtime": lambda dd, body: dd.create_downtime(dict(body)),
    "slo-correction": lambda dd, body: dd.create_correction(dict(body)),
}


def _create(dd: FakeDatadog, kind: str, bodies: Sequence[Body]) -> list[str]:
    return [str(_CREATES[kind](dd, body)["id"]) for body in bodies]


_OPS: dict[str, Callable[..., Any]] = {
    "reset_log": lambda dd: dd.reset_log(),
    "log": lambda dd: list(dd.log),
    "monitor_count": lambda dd: len(dd.monitors),
    "create": _create,
    "cpu": lambda dd: time.process_time(),
    "put_series": lambda dd, *args: dd.put_series(*args),
}


def _serve(conn: Connection, latency: float, rate_limit: int | None, period: float) -> None:
    with FakeDatadog(faults=Faults(latency=latency, rate_limit=rate_limit, rate_period=period)) as dd:
        started = dd._limiter._start  # where its windows begin; monotonic time is the machine's
        conn.send((dd.url, dd.api_key, dd.app_key, started))
        while True:
            op, args = conn.recv()
            if op == "stop":
                break
            conn.send(_OPS[op](dd, *args))
    conn.close()


class FakeProcess:
    """A FakeDatadog in a child process; a context manager with what the benchmark asks of the fake."""

    def __init__(self, latency: float, rate_limit: int | None, period: float) -> None:
        self._settings = (latency, rate_limit, period)
        self.url = self.api_key = self.app_key = ""
        self.opened = 0.0  # when its rate-limit windows started (time.monotonic, shared by processes)

    def __enter__(self) -> FakeProcess:
        context = multiprocessing.get_context("spawn")  # no inherited threads or locks from this process
        self._conn, child_end = context.Pipe()
        self._process = context.Process(target=_serve, args=(child_end, *self._settings), daemon=True)
        self._process.start()
        self.url, self.api_key, self.app_key, self.opened = self._conn.recv()
        return self

    def __exit__(self, *exc: object) -> None:
        self._conn.send(("stop", ()))
        self._process.join(timeout=30)
        self._conn.close()

    def _ask(self, op: str, *args: Any) -> Any:
        self._conn.send((op, args))
        return self._conn.recv()

    def reset_log(self) -> None:
        self._ask("reset_log")

    @property
    def log(self) -> list[Request]:
        found: list[Request] = self._ask("log")
        return found

    def monitor_count(self) -> int:
        count: int = self._ask("monitor_count")
        return count

    def create(self, kind: str, bodies: Sequence[Body]) -> list[str]:
        """Objects of one kind (named as in output: slo, monitor, downtime...), made as a person would: their IDs."""
        ids: list[str] = self._ask("create", kind, list(bodies))
        return ids

    def put_series(self, metric: str, tags: dict[str, str], points: dict[int, float]) -> None:
        """Metric history for the timeseries query: points by epoch second."""
        self._ask("put_series", metric, tags, points)

    def cpu(self) -> float:
        """The fake process's CPU seconds so far."""
        seconds: float = self._ask("cpu")
        return seconds
