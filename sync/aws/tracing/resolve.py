"""Find the topic to trace in the definitions, with its queues, subscription DLQs and publisher logs."""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from pathlib import Path

from sync.aws.core.events import queue_name_of
from sync.aws.core.target import Destination, TraceTarget, is_topic_arn, target_from_arn
from sync.definitions import load
from sync.errors import ObsError
from sync.expand import naming


def target_from_definitions(root: Path, env: str, topic: str) -> TraceTarget:
    defs = load.load(root)
    return target_from_placed(naming.placed_queues(defs, defs.environment(env)), env, topic)


def target_from_placed(queues: Sequence[naming.PlacedQueue], env: str, topic: str) -> TraceTarget:
    """The topic named by logical name, physical name or ARN among the environment's queues."""
    matches = [
        (queue, placed)
        for queue in queues
        for placed in queue.topics
        if topic in {placed.name, placed.sns_name, placed.arn}
    ]
    if not matches:
        if is_topic_arn(topic):  # an ARN the definitions do not know can still be traced
            return target_from_arn(topic)
        known = sorted({t.name for q in queues for t in q.topics})
        close = difflib.get_close_matches(topic, [*known, *sorted({t.sns_name for q in queues for t in q.topics})], n=1)
        guess = f"did you mean {close[0]}? " if close else ""
        raise ObsError.of(
            f"no topic {topic!r} feeds a queue in environment {env!r}",
            f"{guess}use one of: {', '.join(known)}" if known else "declare topics under the queues in queues.yaml",
        )
    arns = sorted({placed.arn for _, placed in matches})
    if len(arns) > 1:
        raise ObsError.of(f"topic {topic!r} is ambiguous in {env!r}: {', '.join(arns)}", "pass the topic ARN")
    destinations = tuple(
        sorted(
            {
                Destination(
                    queue=queue.sqs_name,
                    queue_arn=queue.sqs_arn,
                    logical=queue.name,
                    subscription_dlq=placed.subscription_dlq,
                )
                for queue, placed in matches
            },
            key=lambda d: d.queue,
        )
    )
    publishers = tuple(
        sorted(
            {queue.publisher_log for queue, _ in matches if queue.publisher_log is not None},
            key=lambda p: p.log_group,
        )
    )
    return TraceTarget(topic_arn=arns[0], destinations=destinations, publishers=publishers)


def resolve_queues(target: TraceTarget, asked: Sequence[str]) -> frozenset[str]:
    """Physical queue names for --queue values given as logical name, physical name, ARN or URL."""
    out = set()
    for value in asked:
        named = [d.queue for d in target.destinations if value in {d.logical, d.queue, d.queue_arn}]
        out.update(named or [queue_name_of(value)])
    return frozenset(out)
