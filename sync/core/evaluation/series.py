"""Pure: the scenario's datapoints, when each becomes visible to Datadog, and how a metric query selects them.

One point per CloudWatch period, stamped with its minute; a point counts for an evaluation only once it has
arrived (https://docs.datadoghq.com/integrations/guide/cloud-metric-delay/).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from sync.core.evaluation import notes
from sync.core.metric_query import Leaf

CRAWLER_DELAY = 17  # U6: available at m + 2, then at worst a full 10-minute crawl cycle and 5 minutes queueing
STREAM_DELAY = 3  # Metric Streams: "a two to three minute latency" (Datadog's Metric Streams guide)
IDLE_MINUTES = 360  # SQS: a queue without messages or calls for six hours stops reporting
WAKE_MINUTES = 15  # "a delay of up to 15 minutes ... when a queue is activated from an inactive state"
SNS_PREFIX = "aws.sns."
SNS_PERIODS = (1, 5)  # U5: SNS to CloudWatch in 1- or 5-minute periods; neither reading is documented


@dataclass(frozen=True)
class Arrival:
    """One point of the documented arrival range, applied to every source of a scenario at once: each
    expectation must hold at both ends of the range and in its middle, so none passes by a lucky delay."""

    name: str
    crawler: int  # minutes after the stamp: available at m + 2, then the crawl phase and 0-5 min queueing
    streams: int  # Metric Streams: two to three minutes
    wake: int  # extra delay of a queue waking from six idle hours: up to 15 minutes
    crawler_5m: int  # a 5-minute point after its stamp: 15-20 min after the period's start, plus queueing
    streams_5m: int  # a 5-minute point streams once its period closes

    def delay(self, collection: str, period: int) -> int:
        if period == 5:
            return self.streams_5m if collection == "streams" else self.crawler_5m
        return self.streams if collection == "streams" else self.crawler


ARRIVALS = (
    Arrival("earliest arrival", crawler=2, streams=2, wake=0, crawler_5m=10, streams_5m=7),
    Arrival("middle arrival", crawler=10, streams=3, wake=8, crawler_5m=15, streams_5m=8),
    Arrival(
        "latest arrival", crawler=CRAWLER_DELAY, streams=STREAM_DELAY, wake=WAKE_MINUTES, crawler_5m=20, streams_5m=8
    ),
)
LATEST = ARRIVALS[-1]

# Datadog lists the SNS failure counter as a count; the in-app type of the SQS counters is not public (U4).
COUNT_METRICS = frozenset({"aws.sns.number_of_notifications_failed"})


@dataclass(frozen=True)
class Segment:
    """Values from the previous segment's end up to `until` (exclusive): a constant, a ramp, or nothing."""

    until: int
    value: float | None = None
    ramp: tuple[float, float] | None = None
    every: int = 1  # minutes between points


@dataclass(frozen=True)
class Series:
    metric: str
    tags: Mapping[str, str]
    points: Mapping[int, float]  # minute -> value
    arrival: Mapping[int, int] = field(default_factory=dict)  # minute -> minute it becomes queryable

    def visible(self, minute: int, at: int) -> float | None:
        """The point stamped `minute`, if it has arrived by `at` (U2: nothing is judged again later)."""
        if minute not in self.points or self.arrival.get(minute, minute) > at:
            return None
        return self.points[minute]


def points(segments: Sequence[Segment], first: int = 0) -> dict[int, float]:
    """The datapoints a piecewise shape describes, one every `every` minutes from each segment's start; the
    first segment starts at `first` (before 0: the history a scenario starts in)."""
    out: dict[int, float] = {}
    start = first
    for segment in segments:
        length = segment.until - start
        for minute in range(start, segment.until, segment.every):
            if segment.ramp is not None:
                low, high = segment.ramp
                span = max(length - 1, 1)
                out[minute] = low + (high - low) * (minute - start) / span
            elif segment.value is not None:
                out[minute] = segment.value
        start = segment.until
    return out


def five_minute(stamped: Mapping[int, float], summed: bool) -> dict[int, float]:
    """One-minute points as CloudWatch reports them in 5-minute periods: one point per period that holds any,
    stamped with the period's start, their sum for a counter and their mean otherwise."""
    periods: dict[int, list[float]] = {}
    for minute, value in stamped.items():
        periods.setdefault(minute - minute % 5, []).append(value)
    return {start: sum(vs) if summed else sum(vs) / len(vs) for start, vs in sorted(periods.items())}


def arrivals(
    stamped: Mapping[int, float],
    delay: int,
    sqs: bool,
    idle_before: bool,
    used: set[notes.Assumption],
    wake: int = WAKE_MINUTES,
) -> dict[int, int]:
    """When each point arrives. An SQS queue that wakes from six idle hours (or from an idle start of the
    scenario, `idle_before`) reports its first 15 minutes up to `wake` minutes late (U7: late, not lost)."""
    used.add(notes.CRAWLER_ARRIVAL)
    out = {}
    previous: int | None = None
    woke_at: int | None = None
    for minute in sorted(stamped):
        idle = (minute - previous >= IDLE_MINUTES) if previous is not None else idle_before
        if sqs and idle:
            woke_at = minute
            used.add(notes.QUEUE_WAKE)
        late = wake if woke_at is not None and minute - woke_at < WAKE_MINUTES else 0
        out[minute] = minute + delay + late
        previous = minute
    return out


def gapped(
    stamped: Mapping[int, float], arrived: Mapping[int, int], gaps: Sequence[tuple[int, int, int | None]]
) -> tuple[dict[int, float], dict[int, int]]:
    """The points with their arrival gaps: (start, until, late) holds back the points stamped in [start, until)
    `late` minutes more, or for good (None). A late point counts for every evaluation after it arrives whose
    window still holds its minute; a lost one never does."""
    kept, when = dict(stamped), dict(arrived)
    for start, until, late in gaps:
        for minute in [m for m in kept if start <= m < until]:
            if late is None:
                del kept[minute], when[minute]
            else:
                when[minute] += late
    return kept, when


def matching(series: Iterable[Series], leaf: Leaf) -> tuple[Series, ...]:
    """The series a metric query selects: the same metric, carrying every tag of its filter."""
    return tuple(s for s in series if s.metric == leaf.metric and all(s.tags.get(k) == v for k, v in leaf.tags))


def is_count(leaf: Leaf) -> bool:
    """A count-typed metric under .as_count(): summed, not interpolated, missing values are 0 (section
    "The as_count() / as_rate() evaluation path"). On a gauge the modifier does nothing."""
    return leaf.modifier == "as_count" and leaf.metric in COUNT_METRICS


def space_aggregate(space: str, values: Sequence[float]) -> float:
    if space == "sum":
        return sum(values)
    if space == "max":
        return max(values)
    if space == "min":
        return min(values)
    return sum(values) / len(values)
