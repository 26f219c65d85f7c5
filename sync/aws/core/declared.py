"""What the definitions declare about one environment's AWS wiring, placed at its physical names (pure)."""

from __future__ import annotations

from dataclasses import dataclass

from sync.definitions.model import Definitions, Environment
from sync.expand import naming, placement


@dataclass(frozen=True)
class TopicSpec:
    name: str  # logical
    arn: str
    subscription_dlq: str | None  # physical name of the subscription's DLQ
    subscription_dlq_arn: str | None
    raw_message_delivery: bool | None

    @property
    def fifo(self) -> bool:
        return self.arn.endswith(".fifo")


@dataclass(frozen=True)
class QueueSpec:
    """One declared queue with everything obs audit compares against the live queue."""

    queue: str  # logical
    name: str  # physical
    arn: str
    region: str
    account_id: str
    fifo: bool
    content_based_deduplication: bool | None
    retention_seconds: int
    max_processing_seconds: int | None
    dlq_name: str | None
    dlq_arn: str | None
    max_receive_count: int | None
    topics: tuple[TopicSpec, ...]

    @property
    def url(self) -> str:
        return queue_url(self.region, self.account_id, self.name)


def queue_url(region: str, account_id: str, name: str) -> str:
    return f"{placement.endpoint('sqs', region)}/{account_id}/{name}"


def queue_specs(defs: Definitions, env: Environment) -> tuple[QueueSpec, ...]:
    """Every queue enabled in the environment, in inventory order."""
    return tuple(_spec(defs, placed) for placed in naming.placed_queues(defs, env))


def _spec(defs: Definitions, placed: naming.PlacedQueue) -> QueueSpec:
    queue = placed.queue
    raw = {t.name: t.raw_message_delivery for t in queue.topics}
    prefix = placed.sqs_arn.rsplit(":", 1)[0]
    topics = tuple(
        TopicSpec(
            name=t.name,
            arn=t.arn,
            subscription_dlq=t.subscription_dlq,
            subscription_dlq_arn=f"{prefix}:{t.subscription_dlq}" if t.subscription_dlq else None,
            raw_message_delivery=raw.get(t.name),
        )
        for t in placed.topics
    )
    return QueueSpec(
        queue=placed.name,
        name=placed.sqs_name,
        arn=placed.sqs_arn,
        region=placed.region,
        account_id=placed.account_id,
        fifo=queue.fifo,
        content_based_deduplication=queue.content_based_deduplication,
        retention_seconds=queue.retention_seconds,
        max_processing_seconds=defs.max_processing_seconds(queue),
        dlq_name=placed.dlq_sqs_name,
        dlq_arn=f"{prefix}:{placed.dlq_sqs_name}" if placed.dlq_sqs_name else None,
        max_receive_count=queue.dlq.max_receive_count if queue.dlq else None,
        topics=topics,
    )
