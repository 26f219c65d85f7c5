"""Pure: fetched history as the series the model reads, at each point of the documented arrival range (U6, U7)
and, for SNS, under both periods (U5): the same construction `obs test` gives a scenario's series."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from sync.core.evaluation import notes
from sync.core.evaluation.series import (
    ARRIVALS,
    IDLE_MINUTES,
    LATEST,
    SNS_PERIODS,
    SNS_PREFIX,
    Series,
    arrivals,
    five_minute,
)


@dataclass(frozen=True)
class History:
    """One fetched series: its Datadog metric and tags, and its points by minute from the replay's start."""

    metric: str
    tags: Mapping[str, str]
    points: Mapping[int, float]
    sqs: bool  # an SQS queue's metric: a queue waking from six idle hours reports late (U7)


@dataclass(frozen=True)
class Reading:
    name: str
    series: tuple[Series, ...]


def readings(history: Sequence[History], collection: str, used: set[notes.Assumption]) -> tuple[Reading, ...]:
    """Every arrival reading, the latest first (the one the report shows). A series the SNS period does not
    change is one object in every reading of an arrival, so runs that read only it are shared."""
    sns = any(h.metric.startswith(SNS_PREFIX) for h in history)
    if sns:
        used.add(notes.SNS_PERIOD)
    # One points object per series and period, whatever the arrival: runs that do not depend on when points
    # arrive (monitor.arrival_blind) are shared across arrivals by it.
    stamped = {
        period: [_stamped(h, period) if period == 1 or h.metric.startswith(SNS_PREFIX) else {} for h in history]
        for period in SNS_PERIODS
    }
    out: list[Reading] = []
    for arrival in (LATEST, *(a for a in ARRIVALS if a is not LATEST)):
        plain = [
            _series(h, stamped[1][i], collection, arrival.delay(collection, 1), arrival.wake, used)
            for i, h in enumerate(history)
        ]
        for period in SNS_PERIODS if sns else (1,):
            made = tuple(
                _series(h, stamped[period][i], collection, arrival.delay(collection, period), arrival.wake, used)
                if period != 1 and h.metric.startswith(SNS_PREFIX)
                else plain[i]
                for i, h in enumerate(history)
            )
            out.append(Reading(f"{arrival.name}, SNS period {period} min" if sns else arrival.name, made))
    return tuple(out)


def _stamped(h: History, period: int) -> dict[int, float]:
    stamped = dict(h.points)
    return stamped if period == 1 else five_minute(stamped, summed=not h.metric.endswith("publish_size"))


def _series(
    h: History, stamped: Mapping[int, float], collection: str, delay: int, wake: int, used: set[notes.Assumption]
) -> Series:
    # Idle before the history when its first point comes six hours or more into it.
    idle_before = bool(stamped) and min(stamped) >= IDLE_MINUTES
    arrived = arrivals(stamped, delay, h.sqs, idle_before, used, wake=wake)
    return Series(h.metric, dict(h.tags), stamped, arrived)
