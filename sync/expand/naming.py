"""Place the inventory in one environment: physical AWS names and ARNs, with the environment's overrides."""

from __future__ import annotations

from dataclasses import dataclass, replace

from sync.definitions import tokens
from sync.definitions.model import Definitions, Environment, PublisherLog, Queue
from sync.expand import placement


@dataclass(frozen=True)
class PlacedTopic:
    name: str
    sns_name: str
    arn: str
    subscription_dlq: str | None


@dataclass(frozen=True)
class PlacedQueue:
    name: str
    env: str
    region: str
    account_id: str
    sqs_name: str
    sqs_arn: str
    dlq_sqs_name: str | None
    cluster: str | None  # the worker's ECS cluster and service names, when the queue has a worker
    service: str | None
    topics: tuple[PlacedTopic, ...]
    publisher_log: PublisherLog | None
    queue: Queue


def place(env: Environment, queue: Queue) -> PlacedQueue:
    suffix = ".fifo" if queue.fifo else ""  # AWS requires FIFO queue and topic names to end so

    def physical(kind: str, logical: str) -> str:
        return env.name_of(kind, logical) + suffix

    sqs_name = physical("queue", queue.name)
    topics = tuple(
        PlacedTopic(
            name=t.name,
            sns_name=physical("topic", t.name),
            arn=placement.arn("sns", env.region, env.account_id, physical("topic", t.name)),
            subscription_dlq=physical("queue", t.subscription_dlq) if t.subscription_dlq else None,
        )
        for t in queue.topics
    )
    log = queue.publisher_log
    if log:
        log = PublisherLog(tokens.fill(log.log_group, {"env": env.name}), log.message_id_field, log.business_key_field)
    return PlacedQueue(
        name=queue.name,
        env=env.name,
        region=env.region,
        account_id=env.account_id,
        sqs_name=sqs_name,
        sqs_arn=placement.arn("sqs", env.region, env.account_id, sqs_name),
        dlq_sqs_name=physical("queue", queue.dlq.name) if queue.dlq else None,
        cluster=env.name_of("cluster", queue.worker.cluster) if queue.worker else None,
        service=env.name_of("service", queue.worker.service) if queue.worker else None,
        topics=topics,
        publisher_log=log,
        queue=queue,
    )


def placed_queues(defs: Definitions, env: Environment) -> tuple[PlacedQueue, ...]:
    """Every queue enabled in the environment, placed there, in inventory order, with its class's
    max_processing_seconds where it declares none of its own."""
    return tuple(
        place(env, replace(queue, max_processing_seconds=defs.max_processing_seconds(queue)))
        for queue in defs.env_queues[env.name]
    )
