"""Pure: facts about AWS metrics that decide monitors and that the documentation leaves open. A scenario with a
series a fact touches runs under each of its readings, and an expectation must hold under all of them."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from sync.core.evaluation.tasks import TASK_COUNTS

SQS_COUNTERS = "aws.sqs.number_of_"  # sent, received, deleted, empty receives: counts of calls per period


@dataclass(frozen=True)
class Reading:
    fact: str  # what is open
    name: str  # this reading of it, as the output names it


PER_MINUTE = Reading("sqs counters", "SQS counters per minute")
PER_SECOND = Reading("sqs counters", "SQS counters per second")
ZEROS = Reading("ecs task counts", "ECS zeros reported")
NO_ZEROS = Reading("ecs task counts", "ECS zeros missing")
# Per fact, the usual reading first: the one pager load and passing details are shown under.
READINGS = ((PER_MINUTE, PER_SECOND), (ZEROS, NO_ZEROS))


def touches(fact: str, metric: str, values: Mapping[int, float]) -> bool:
    """Whether the fact can change this series: a counter for the unit; a task count that reaches 0 for zeros."""
    if fact == PER_MINUTE.fact:
        return metric.startswith(SQS_COUNTERS)
    return metric in TASK_COUNTS and any(v == 0 for v in values.values())


def polled(metric: str) -> bool:
    """ECS task counts come from the ECS API, polled by the AWS integration whatever carries CloudWatch's metrics:
    Metric Streams cannot send them (alert-audit-2 F10)."""
    return metric in TASK_COUNTS


def read(reading: Reading, metric: str, values: Mapping[int, float]) -> Mapping[int, float]:
    """The points Datadog holds under the reading: Datadog shows AWS data "in per-second values" [AWS-TS], so a
    counter may hold a minute's count / 60; the ECS API may leave out a service's zero tasks."""
    if not touches(reading.fact, metric, values):
        return values
    if reading == PER_SECOND:
        return {m: v / 60 for m, v in values.items()}
    if reading == NO_ZEROS:
        return {m: v for m, v in values.items() if v != 0}
    return values
