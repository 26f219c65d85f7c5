"""Pure: a scenario's series as Datadog holds them in one environment, under every reading the model runs: each
point of the arrival range (U6, U7), both SNS periods (U5), and both readings of each open fact about the metrics
(SQS counter units, ECS zeros) that a series touches."""

from __future__ import annotations

from collections.abc import Collection, Iterator, Mapping, Sequence
from itertools import product

from sync.core.evaluation import facts, notes
from sync.core.evaluation.facts import Reading
from sync.core.evaluation.series import (
    ARRIVALS,
    SNS_PERIODS,
    SNS_PREFIX,
    Arrival,
    Series,
    arrivals,
    five_minute,
    gapped,
    points,
)
from sync.core.evaluation.tasks import spread
from sync.definitions.scenario import Scenario
from sync.definitions.scenario_series import SeriesSpec
from sync.errors import ObsError
from sync.expand.naming import PlacedQueue

_SQS = ("queue", "dlq", "subscription_dlq")

Readings = tuple[tuple[str, tuple[Series, ...]], ...]


def readings(
    scenario: Scenario,
    placed: PlacedQueue,
    collection: str,
    used: set[notes.Assumption],
    declared: Collection[Reading] = (),
) -> Readings:
    """(reading, series) for every combination; a series that does not change between two readings is one object,
    so runs that read only it are shared. A fact the environment declares (`declared`) has that reading only."""
    values = [points(s.segments, s.start) for s in scenario.series]
    sns = any(s.metric.startswith(SNS_PREFIX) for s in scenario.series)
    pairs = list(zip(scenario.series, values, strict=True))
    open_facts = [
        tuple(r for r in pair if r in declared) or pair
        for pair in facts.READINGS
        if any(facts.touches(pair[0].fact, s.metric, v) for s, v in pairs)
    ]
    _note(scenario, sns, open_facts, used)
    made: dict[tuple[object, ...], tuple[Series, ...]] = {}
    out: list[tuple[str, tuple[Series, ...]]] = []
    for arrival, period, chosen in product(ARRIVALS, SNS_PERIODS if sns else (1,), product(*open_facts)):
        found: list[Series] = []
        for index, spec in enumerate(scenario.series):
            mine = tuple(r for r in chosen if facts.touches(r.fact, spec.metric, values[index]))
            own = period if spec.metric.startswith(SNS_PREFIX) else 1
            memo = (index, arrival, own, mine)
            if memo not in made:
                made[memo] = tuple(_series(spec, values[index], placed, collection, arrival, own, mine, used))
            found += made[memo]
        name = ", ".join([arrival.name, *([f"SNS period {period} min"] if sns else []), *(r.name for r in chosen)])
        out.append((name, tuple(found)))
    return tuple(out)


def _note(
    scenario: Scenario, sns: bool, open_facts: Sequence[tuple[Reading, ...]], used: set[notes.Assumption]
) -> None:
    if sns:
        used.add(notes.SNS_PERIOD)
    if any(pair[0].fact == facts.PER_MINUTE.fact and len(pair) > 1 for pair in open_facts):
        used.add(notes.SQS_COUNTER_UNIT)
    if any(facts.polled(s.metric) for s in scenario.series):
        used.add(notes.ECS_API_COUNTS)
    if any(s.tasks is not None for s in scenario.series):
        used.add(notes.PER_TASK)


def _series(
    spec: SeriesSpec,
    values: Mapping[int, float],
    placed: PlacedQueue,
    collection: str,
    arrival: Arrival,
    period: int,
    chosen: Sequence[Reading],
    used: set[notes.Assumption],
) -> Iterator[Series]:
    tags = _tags(spec, placed)
    lost = tuple((g.start, g.until, None) for g in spec.gaps if g.late is None)
    stamped, _ = gapped(values, {m: m for m in values}, lost)
    for reading in chosen:
        stamped = dict(facts.read(reading, spec.metric, stamped))
    if period != 1:
        stamped = five_minute(stamped, summed=not spec.metric.endswith("publish_size"))
    # The ECS API is polled whatever carries CloudWatch's metrics (F10): its counts keep the crawler's delay.
    delay = arrival.delay("crawler" if facts.polled(spec.metric) else collection, period)
    arrived = arrivals(stamped, delay, spec.of in _SQS, spec.idle_before, used, wake=arrival.wake)
    late = tuple((g.start, g.until, g.late) for g in spec.gaps if g.late is not None)
    stamped, arrived = gapped(stamped, arrived, late)
    if spec.tasks is None:
        yield Series(spec.metric, tags, stamped, arrived)
        return
    for metric, carried, spread_points in spread(spec.metric, tags, stamped, spec.tasks):
        yield Series(metric, carried, spread_points, arrived)


def _tags(spec: SeriesSpec, placed: PlacedQueue) -> dict[str, str]:
    tags = placed_tags(spec.of, spec.topic, placed)
    if tags is None:
        raise ObsError.of(f"queue '{placed.name}' has no {spec.of} in {placed.env}")  # checked when loading
    return tags


def placed_tags(of: str, topic_name: str | None, placed: PlacedQueue) -> dict[str, str] | None:
    """The tags a series `of` the queue (or of its topic) carries in the environment; None: it has no such thing."""
    topic = next((t for t in placed.topics if t.name == topic_name), None)
    by_kind: dict[str, dict[str, str | None]] = {
        "queue": {"queuename": placed.sqs_name},
        "dlq": {"queuename": placed.dlq_sqs_name},
        "topic": {"topicname": topic.sns_name if topic else None},
        "subscription_dlq": {"queuename": topic.subscription_dlq if topic else None},
        "service": {"clustername": placed.cluster, "servicename": placed.service},
    }
    tags = by_kind[of]
    if any(value is None for value in tags.values()):
        return None
    # The AWS integration tags every metric with the region and account it came from; the queries scope by them.
    carried = {**tags, "region": placed.region, "aws_account": placed.account_id}
    return {k: str(v) for k, v in carried.items()}


def placement_of(tags: Mapping[str, str], placed: PlacedQueue) -> tuple[str, str | None] | None:
    """The inverse of `placed_tags`: which series of the scenario (`of`, and its topic) a series tagged so is,
    judged by the names it carries (a filter may leave out the region or account); None: not one of the queue's."""
    for of in ("queue", "dlq", "subscription_dlq", "topic", "service"):
        for topic in (None, *(t.name for t in placed.topics)) if of in ("topic", "subscription_dlq") else (None,):
            wanted = placed_tags(of, topic, placed)
            names = {k: v for k, v in (wanted or {}).items() if k not in ("region", "aws_account")}
            if wanted and all(tags.get(k) == v for k, v in names.items()) and _same_place(tags, wanted):
                return of, topic
    return None


def _same_place(tags: Mapping[str, str], wanted: Mapping[str, str]) -> bool:
    return all(tags.get(k, v) == v for k, v in wanted.items() if k in ("region", "aws_account"))
