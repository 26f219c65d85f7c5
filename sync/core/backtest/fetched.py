"""Pure: what every source of backtest history shares: points by UTC minute, what a fetch found and cost, the
cache it keeps finished days in, and the cut of a period into UTC days."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Generic, Protocol, TypeVar

from sync.errors import ObsError

Points = dict[datetime, float]
K = TypeVar("K")

# A day is kept once it ended this long ago: the source may still add late points to the last minutes.
SETTLED = timedelta(hours=1)

SOURCES = {"cloudwatch": "CloudWatch", "datadog": "Datadog"}  # where obs backtest reads history, by option


@dataclass
class Fetched(Generic[K]):
    """Each series' points (UTC minute -> value), why some could not be read, and what the reading cost."""

    points: dict[K, Points] = field(default_factory=dict)
    unread: dict[K, str] = field(default_factory=dict)
    calls: int = 0
    datapoints: int = 0
    cached: int = 0  # series-days read from the cache


class Store(Protocol):
    """Where finished days are kept between runs (sync.aws.backtest.cache.Cache), by a hash of what was asked."""

    def get(self, key: str) -> Points | None: ...

    def put(self, key: str, points: Points) -> None: ...


def days(start: datetime, end: datetime) -> list[tuple[datetime, datetime]]:
    """[start, end) cut at each UTC midnight."""
    out = []
    at = start
    while at < end:
        midnight = (at + timedelta(days=1)).replace(hour=0, minute=0, second=0, microsecond=0)
        out.append((at, min(midnight, end)))
        at = midnight
    return out


def settled(end: datetime, now: datetime) -> bool:
    return end <= now - SETTLED


def check_period(start: datetime, end: datetime, now: datetime, kept: timedelta, source: str, kept_as: str) -> None:
    """The period is one, is over, and starts within what the source keeps at one-minute resolution (`kept`,
    which `kept_as` says as the source documents it)."""
    if end <= start:
        raise ObsError.of(
            f"the period ends ({minute(end)}) before it starts ({minute(start)})", "give --from before --to"
        )
    if end > now + timedelta(minutes=1):
        raise ObsError.of(f"the period ends in the future ({minute(end)})", "give --to now or earlier, or leave it out")
    oldest = now - kept
    if start < oldest:
        raise ObsError.of(
            f"the period starts {minute(start)}, before what {source} keeps at 1-minute resolution "
            f"({kept_as}: from {minute(oldest)})",
            "give a later --from, or fewer --days",
        )


def minute(moment: datetime) -> str:
    """A UTC minute as the backtest's messages and cache keys write it: 2025-01-31T08:00Z."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%MZ")
