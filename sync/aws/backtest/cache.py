"""The backtest cache: one file per series and finished UTC day, named by the hash of the query and the day.
It holds metric values and timestamps only, never credentials."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

from sync.core.backtest.fetched import Points
from sync.errors import ObsError


class Cache:
    def __init__(self, folder: Path | None) -> None:
        self._folder = folder  # None: --no-cache

    def get(self, key: str) -> Points | None:
        if self._folder is None:
            return None
        path = self._folder / f"{key}.json"
        try:
            raw = json.loads(path.read_text(encoding="utf-8"))
            return {datetime.fromtimestamp(int(stamp), UTC): float(value) for stamp, value in raw["points"]}
        except FileNotFoundError:
            return None
        except (OSError, ValueError, KeyError, TypeError):
            return None  # a damaged entry is read again from the source, and rewritten

    def put(self, key: str, points: Points) -> None:
        if self._folder is None:
            return
        pairs = sorted((int(stamp.timestamp()), value) for stamp, value in points.items())
        try:
            self._folder.mkdir(parents=True, exist_ok=True)
            path = self._folder / f"{key}.json"
            partial = path.with_suffix(".part")
            partial.write_text(json.dumps({"points": pairs}), encoding="utf-8")
            partial.replace(path)
        except OSError as exc:
            raise ObsError.of(
                f"cannot write the backtest cache in {self._folder}: {exc.strerror}",
                "make the folder writable, give another with --cache, or pass --no-cache",
            ) from None
