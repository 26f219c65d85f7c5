"""The physical names obs computes, checked once the naming patterns are applied: valid AWS names, lowercase
(Datadog lowercases tag values, so a capitalised name yields monitors that never match), and a wiring AWS
could run (no queue that is its own DLQ, no two queues with one name)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from sync.definitions.model import Definitions, Environment, Queue
from sync.definitions.source import KeyPath, Source
from sync.errors import ObsError
from sync.expand.naming import PlacedQueue

FIFO = ".fifo"


@dataclass(frozen=True)
class Rule:
    what: str  # as people say it: "SQS queue name"
    most: int  # characters, a FIFO suffix included
    fifo: bool  # whether a FIFO name ends with .fifo


# CreateQueue: 1-80 of [A-Za-z0-9_-], FIFO ends .fifo within the 80. CreateTopic: 1-256 likewise.
# CreateCluster and CreateService: up to 255 letters, numbers, hyphens and underscores.
RULES = {
    "queue": Rule("SQS queue name", 80, fifo=True),
    "topic": Rule("SNS topic name", 256, fifo=True),
    "cluster": Rule("ECS cluster name", 255, fifo=False),
    "service": Rule("ECS service name", 255, fifo=False),
}
_AWS_CHARS = re.compile(r"[A-Za-z0-9_-]+")
_LOWERCASE = re.compile(r"[a-z0-9_-]+")


def check(defs: Definitions, env: Environment, placed: Sequence[PlacedQueue]) -> None:
    """Raise ObsError at the first physical name AWS would refuse or Datadog could not match, or the first
    impossible wiring, naming the file and line to change."""
    for queue in placed:
        _check_names(defs, env, queue)
    _check_wiring(defs, env, placed)


def _check_names(defs: Definitions, env: Environment, placed: PlacedQueue) -> None:
    queue = placed.queue
    names: list[tuple[str, str, KeyPath]] = [("queue", placed.sqs_name, ("name",))]
    if placed.dlq_sqs_name:
        names.append(("queue", placed.dlq_sqs_name, ("dlq", "name")))
    for index, topic in enumerate(placed.topics):
        names.append(("topic", topic.sns_name, ("topics", index, "name")))
        if topic.subscription_dlq:
            names.append(("queue", topic.subscription_dlq, ("topics", index, "subscription_dlq")))
    if placed.cluster and placed.service:
        names += [
            ("cluster", placed.cluster, ("worker", "cluster")),
            ("service", placed.service, ("worker", "service")),
        ]
    for kind, name, field in names:
        problem = name_problem(kind, name, fifo=queue.fifo)
        if problem:
            what, fix = problem
            pattern = env.naming.get(kind)
            source, at = _place(defs, env, queue, field)
            if pattern is not None and _pattern_at_fault(pattern, kind):
                source, at = env.source, ("naming", kind)
            made = f" (naming.{kind} '{pattern}' in {env.name})" if pattern is not None else f" (in {env.name})"
            raise source.error(at, f"the {RULES[kind].what} '{name}' of queue '{queue.name}'{made} {what}", fix)


def name_problem(kind: str, name: str, *, fifo: bool) -> tuple[str, str] | None:
    """What is wrong with one physical name, and how to fix it; None when AWS and Datadog both take it."""
    rule = RULES[kind]
    base = name.removesuffix(FIFO) if rule.fifo and fifo else name
    if not base:
        return "is empty", "give it a name"
    if len(name) > rule.most:
        return f"has {len(name)} characters; AWS allows at most {rule.most}", "shorten the name or the naming pattern"
    if not _AWS_CHARS.fullmatch(base):
        bad = sorted({c for c in base if not _AWS_CHARS.fullmatch(c)})
        return (
            f"has characters AWS does not allow ({' '.join(repr(c) for c in bad)})",
            "use only letters, digits, '-' and '_'"
            + (" (a FIFO name ends with .fifo, added by obs)" if rule.fifo else ""),
        )
    if not _LOWERCASE.fullmatch(base):
        return (
            "has capital letters: Datadog lowercases tag values, so monitors on it would never match its metrics",
            "rename it in lowercase (obs does not lowercase names itself: the AWS name must be lowercase)",
        )
    return None


def _pattern_at_fault(pattern: str, kind: str) -> bool:
    """Whether the pattern's own text (outside its tokens) breaks the rules, so that it is the line to fix."""
    literal = re.sub(r"\[\[\s*\w+\s*\]\]", "", pattern)
    return not literal or name_problem(kind, literal, fifo=False) is not None


def _place(defs: Definitions, env: Environment, queue: Queue, field: KeyPath) -> tuple[Source, KeyPath]:
    """Where a queue attribute is set: the environment's override of the queue if it sets it, else the inventory."""
    override = env.queues.get(queue.name, {})
    if field[0] != "name" and field[0] in override:
        return env.source, ("queues", queue.name, *field)
    return defs.inventory, ("queues", defs.queue_index[queue.name], *field)


def _check_wiring(defs: Definitions, env: Environment, placed: Sequence[PlacedQueue]) -> None:
    sources: dict[str, PlacedQueue] = {}
    for queue in placed:
        first = sources.setdefault(queue.sqs_name, queue)
        if first is not queue:
            pattern = env.naming.get("queue")
            raise _error(
                defs,
                env,
                queue,
                ("name",),
                f"queues '{first.name}' and '{queue.name}' have the same SQS name '{queue.sqs_name}' in {env.name}",
                "give each queue its own name"
                + (f", and keep [[name]] in naming.queue '{pattern}'" if pattern else ""),
            )
    for queue in placed:
        dlq = queue.dlq_sqs_name
        if dlq == queue.sqs_name:
            raise _error(
                defs,
                env,
                queue,
                ("dlq", "name"),
                f"queue '{queue.name}' is its own DLQ ('{dlq}' in {env.name}): failed messages would come back",
                "name a separate queue as its DLQ",
            )
        if dlq is not None and dlq in sources:
            raise _error(
                defs,
                env,
                queue,
                ("dlq", "name"),
                f"the DLQ of queue '{queue.name}' is queue '{sources[dlq].name}' ('{dlq}' in {env.name}), which "
                "its own workers consume: failed messages would be processed again, not kept",
                "give the queue a DLQ that no worker consumes and no topic feeds",
            )
        for index, topic in enumerate(queue.topics):
            parked = topic.subscription_dlq
            if parked is not None and parked in sources:
                raise _error(
                    defs,
                    env,
                    queue,
                    ("topics", index, "subscription_dlq"),
                    f"the subscription DLQ of topic '{topic.name}' is queue '{sources[parked].name}' ('{parked}' in "
                    f"{env.name}), which workers consume: undeliverable messages would be processed, not kept",
                    "name a queue of its own for the subscription DLQ",
                )


def _error(defs: Definitions, env: Environment, queue: PlacedQueue, field: KeyPath, what: str, fix: str) -> ObsError:
    source, at = _place(defs, env, queue.queue, field)
    return source.error(at, what, fix)
