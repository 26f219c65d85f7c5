"""Pure: a worker metric over N tasks, one task (or one zone's tasks) apart from the rest, as each query sees it.

CloudWatch's ECS service metrics are one series per service: the base name is the mean over the service's tasks,
`.maximum` the busiest task and `.minimum` the idlest (https://docs.aws.amazon.com/AmazonECS/latest/developerguide/
cloudwatch-metrics.html, the reference's rule 31). Per-task metrics (the Datadog Agent's) are one series per task,
tagged with the task and its zone, so a query's space aggregator decides: `avg` sees the spike diluted, `max` sees it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

ECS_SERVICE = "aws.ecs.service."
STATISTICS = (".maximum", ".minimum")
# Task counts are the service's, from the ECS API: no task has one of its own.
TASK_COUNTS = frozenset({"aws.ecs.service.running", "aws.ecs.service.desired", "aws.ecs.service.pending"})
ZONES = "abcdef"  # ECS spreads a service's tasks over the region's zones in turn


@dataclass(frozen=True)
class Tasks:
    of: int  # tasks running
    affected: int  # tasks whose values the shape gives (with zones: ignored)
    others: float  # the value every other task holds
    zones: int = 1  # zones the tasks spread over
    affected_zones: int = 0  # with zones: every task in the first this many zones is affected

    def problem(self) -> str:
        if self.zones > len(ZONES) or self.zones > self.of:
            return f"{self.of} tasks cannot spread over {self.zones} zones (at most {min(self.of, len(ZONES))})"
        if self.affected_zones:
            return "" if self.affected_zones < self.zones else "affected_zones must leave a zone unaffected"
        return "" if 0 < self.affected < self.of else f"affected must be between 1 and {self.of - 1}"

    def hit(self, task: int) -> bool:
        """Task 0, 1, ... is affected: the first `affected`, or those in the first `affected_zones` zones."""
        return task % self.zones < self.affected_zones if self.affected_zones else task < self.affected


def per_task(metric: str) -> str:
    """Why the metric cannot be spread over tasks, or ''."""
    if metric in TASK_COUNTS:
        return f"{metric} counts the service's tasks: no task has a value of its own"
    return ""


def family(metric: str) -> tuple[str, ...]:
    """The series a spread metric becomes: an ECS service metric's mean, maximum and minimum, or itself."""
    if not metric.startswith(ECS_SERVICE):
        return (metric,)
    base = next((metric[: -len(s)] for s in STATISTICS if metric.endswith(s)), metric)
    return (base, *(base + s for s in STATISTICS))


def spread(
    metric: str, tags: Mapping[str, str], values: Mapping[int, float], tasks: Tasks
) -> tuple[tuple[str, dict[str, str], dict[int, float]], ...]:
    """(metric, tags, points) of each series the spread makes."""
    each = [[value if tasks.hit(task) else tasks.others for task in range(tasks.of)] for value in values.values()]
    if metric.startswith(ECS_SERVICE):
        base, high, low = family(metric)
        minutes = list(values)
        return (
            (base, dict(tags), {m: sum(v) / len(v) for m, v in zip(minutes, each, strict=True)}),
            (high, dict(tags), {m: max(v) for m, v in zip(minutes, each, strict=True)}),
            (low, dict(tags), {m: min(v) for m, v in zip(minutes, each, strict=True)}),
        )
    region = tags.get("region", "")
    return tuple(
        (
            metric,
            {**tags, "task_arn": f"task-{task + 1}", "availability_zone": f"{region}{ZONES[task % tasks.zones]}"},
            {m: (v if tasks.hit(task) else tasks.others) for m, v in values.items()},
        )
        for task in range(tasks.of)
    )
