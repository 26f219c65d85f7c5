"""The list endpoints' lag: a monitor or SLO just created is not in its list for a while (Datadog's search
index catches up after the write), so a lookup right after a create whose answer was lost can miss it."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

_CREATES = {"create monitor", "create slo"}
_LISTS = {"list monitors", "list slos"}


class Lag:
    def __init__(self, seconds: Callable[[], float]) -> None:
        self._seconds = seconds
        self._born: dict[str, float] = {}  # id -> when it was created
        self._lock = threading.Lock()

    def note(self, action: str, payload: Any) -> None:
        if action in _CREATES and self._seconds() > 0:
            with self._lock:
                self._born.update((str(item["id"]), time.monotonic()) for item in _items(payload))

    def hide(self, action: str, payload: Any) -> Any:
        """The list answer without the objects created less than the lag ago."""
        lag = self._seconds()
        if action not in _LISTS or lag <= 0:
            return payload
        cutoff = time.monotonic() - lag
        with self._lock:
            young = {found for found, born in self._born.items() if born > cutoff}
        if isinstance(payload, list):
            return [item for item in payload if str(item["id"]) not in young]
        return {**payload, "data": [item for item in payload["data"] if str(item["id"]) not in young]}


def _items(payload: Any) -> list[Any]:
    if isinstance(payload, dict) and isinstance(payload.get("data"), list):
        return list(payload["data"])  # an SLO create answers {"data": [the SLO]}
    return [payload] if isinstance(payload, dict) and "id" in payload else []
