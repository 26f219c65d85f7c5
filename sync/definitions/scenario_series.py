"""A scenario's series (`series:` in scenarios/*.yaml): the shape of one metric, its history before minute 0, the
minutes that arrive late or never, and how it spreads over a worker's tasks. Read into frozen data; every problem
names its file and line."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from sync.core.evaluation.series import Segment
from sync.core.evaluation.tasks import Tasks, per_task
from sync.definitions.names import suggest
from sync.definitions.source import KeyPath, Source
from sync.errors import Problems

# Metrics SQS reports for FIFO queues only (https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-available-cloudwatch-metrics.html).
FIFO_ONLY = frozenset({"aws.sqs.approximate_number_of_groups_with_inflight_messages"})


@dataclass(frozen=True)
class Gap:
    """Minutes [start, until) whose points arrive `late` minutes after the usual delay, or never (None)."""

    start: int
    until: int
    late: int | None


@dataclass(frozen=True)
class SeriesSpec:
    metric: str
    of: str  # queue, dlq, topic, subscription_dlq or service
    topic: str | None
    idle_before: bool
    segments: tuple[Segment, ...]
    start: int = 0  # the first segment's first minute: before 0 for history the scenario starts in
    gaps: tuple[Gap, ...] = ()
    tasks: Tasks | None = None  # the shape is the affected tasks'; the others hold a constant


def series(source: Source, index: int, raw: Mapping[str, Any], queue: Mapping[str, Any]) -> SeriesSpec:
    """The series of one entry; every problem of it raised together."""
    at: KeyPath = ("series", index)
    of = raw["of"]
    problems = Problems()
    topic: str | None = None
    needs = {"dlq": "dlq", "service": "worker", "topic": "topics", "subscription_dlq": "topics"}.get(of)
    if needs and not queue.get(needs):
        problems.add(
            source.error((*at, "of"), f"queue '{queue['name']}' has no {needs}, so no {of} series", "use another `of`")
        )
    elif of in ("topic", "subscription_dlq"):
        topic = problems.attempt(topic_of, source, (*at, "topic"), raw.get("topic"), queue)
        declared = {t["name"]: t.get("subscription_dlq") for t in queue.get("topics", ())}
        if of == "subscription_dlq" and topic is not None and not declared.get(topic):
            problems.add(
                source.error(
                    (*at, "of"), f"topic '{topic}' declares no subscription_dlq", "use of: topic, or declare one"
                )
            )
    if raw["metric"] in FIFO_ONLY and not (queue.get("fifo") and of == "queue"):
        problems.add(
            source.error(
                (*at, "metric"),
                f"SQS reports {raw['metric']} for FIFO queues only",
                f"declare queue '{queue['name']}' fifo: true in queues.yaml, or use another metric",
            )
        )
    if raw.get("topic") is not None and of not in ("topic", "subscription_dlq"):
        problems.add(source.error((*at, "topic"), f"a {of} series has no topic", "remove topic, or use of: topic"))
    first = int(raw.get("from", 0))
    segments = _segments(source, at, raw["shape"], first, problems)
    gaps = tuple(
        problems.attempt(_gap, source, (*at, "gaps", i), gap, first) for i, gap in enumerate(raw.get("gaps", ()))
    )
    tasks = problems.attempt(_tasks, source, at, raw, of) if "tasks" in raw else None
    problems.raise_any()
    return SeriesSpec(
        raw["metric"],
        of,
        topic,
        bool(raw.get("idle_before", False)),
        segments,
        first,
        tuple(g for g in gaps if g is not None),
        tasks,
    )


def _segments(
    source: Source, at: KeyPath, shape: list[Mapping[str, Any]], first: int, problems: Problems
) -> tuple[Segment, ...]:
    segments = []
    start = first
    for number, segment in enumerate(shape):
        if segment["until"] <= start:
            problems.add(
                source.error(
                    (*at, "shape", number, "until"),
                    f"until {segment['until']} does not come after the previous segment's end ({start})",
                    "give each segment a later `until`",
                )
            )
        start = segment["until"]
        ramp = segment.get("ramp")
        segments.append(
            Segment(start, segment.get("value"), (ramp[0], ramp[1]) if ramp else None, segment.get("every", 1))
        )
    return tuple(segments)


def _gap(source: Source, at: KeyPath, raw: Mapping[str, Any], first: int) -> Gap:
    if raw["until"] <= raw["from"]:
        raise source.error(
            (*at, "until"), f"the gap ends ({raw['until']}) before it starts ({raw['from']})", "make until later"
        )
    if raw["from"] < first:
        raise source.error(
            (*at, "from"), f"the gap starts ({raw['from']}) before the series ({first})", "start it within the series"
        )
    late = raw.get("late", "never")
    return Gap(raw["from"], raw["until"], None if late == "never" else int(late))


def _tasks(source: Source, at: KeyPath, raw: Mapping[str, Any], of: str) -> Tasks:
    given = raw["tasks"]
    if of != "service":
        raise source.error((*at, "tasks"), f"a {of} series has no tasks", "use of: service, or remove tasks")
    zones = (given.get("zones", 1), given.get("affected_zones", 0))
    tasks = Tasks(given["of"], given.get("affected", 0), float(given["others"]), *zones)
    problem = tasks.problem() or per_task(raw["metric"])
    if problem:
        raise source.error((*at, "tasks"), problem, "see docs/scenarios.md, Tasks and zones")
    return tasks


def topic_of(source: Source, at: KeyPath, topic: str | None, queue: Mapping[str, Any]) -> str:
    topics = [t["name"] for t in queue.get("topics", ())]
    if topic is None:
        if len(topics) != 1:
            raise source.error(
                at[:-1], f"queue '{queue['name']}' has {len(topics)} topics", "say which with topic: NAME"
            )
        return str(topics[0])
    if topic not in topics:
        raise source.error(
            at, f"queue '{queue['name']}' has no topic '{topic}'", suggest(topic, topics, "the queue's topics")
        )
    return topic
