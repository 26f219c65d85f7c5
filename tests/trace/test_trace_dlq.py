"""--peek-dlq leaves the DLQ as it found it: nothing deleted, everything visible again, even after a failure."""

from __future__ import annotations

import io
import json
from typing import Any

from sync.aws.reads.clients import Clients
from sync.cli.conventions import Exit
from sync.cli.trace import execute
from tests.trace.test_trace_correlate import park
from tests.trace.test_trace_moto import NOW, TOPIC, ago, parse
from tests.trace.trace_world import World, failure_event, failure_group

DLQ = "prod-critical-undeliverable"


def parked_failures(world: World, count: int, *, dlq: str = DLQ, topic_name: str = TOPIC) -> str:
    """`count` failed messages whose envelopes wait in the subscription DLQ; returns the topic ARN."""
    topic = world.topic(topic_name)
    world.enable_logging(topic)
    dlq_arn = world.queue(dlq)
    bodies = [json.dumps({"job": n}) for n in range(count)]
    if topic_name.endswith(".fifo"):  # one message group, as a tenant's backlog would be
        subscription = world.subscribe(topic, dlq_arn)
        ids = [world.publish(topic, b, MessageGroupId="tenant", MessageDeduplicationId=f"d-{n}") for n, b in
               enumerate(bodies)]  # fmt: skip
        world.sns.unsubscribe(SubscriptionArn=subscription)
    else:
        ids = park(world, topic, dlq_arn, bodies)
    queue = "prod-critical.fifo" if topic_name.endswith(".fifo") else "prod-critical"
    world.subscribe(topic, world.queue(queue), dlq_arn=dlq_arn)
    events = [
        (ago(30), failure_event("access_denied", message_id=ident, topic_arn=topic, queue=queue, published=ago(31)))
        for ident in ids
    ]
    world.put_events(failure_group(topic), events)
    return topic


def calls(clients: Clients, *operations: str) -> dict[str, int]:
    """Count the SQS calls made, by operation, through a botocore event hook."""
    counted = dict.fromkeys(operations, 0)
    for operation in operations:

        def count(name: str = operation, **_: Any) -> None:
            counted[name] += 1

        clients.sqs.meta.events.register(f"before-call.sqs.{operation}", count)
    return counted


def trace_json(clients: Clients, *argv: str) -> tuple[int, dict[str, Any]]:
    out = io.StringIO()
    args = parse(*argv, "--peek-dlq", "--format", "json")
    code = execute(args, lambda region, endpoint: clients, now=NOW, out=out, err=io.StringIO())
    return code, json.loads(out.getvalue())


def visible(world: World, queue: str = DLQ) -> str:
    attributes = world.sqs.get_queue_attributes(QueueUrl=world.url(queue), AttributeNames=["All"])["Attributes"]
    shown, held = attributes["ApproximateNumberOfMessages"], attributes["ApproximateNumberOfMessagesNotVisible"]
    return f"{shown} visible, {held} held"


def test_peeking_never_deletes_a_message(world: World) -> None:
    topic = parked_failures(world, 12)
    clients = world.clients()
    counted = calls(clients, "DeleteMessage", "DeleteMessageBatch", "ReceiveMessage", "ChangeMessageVisibilityBatch")

    code, doc = trace_json(clients, "--topic", topic)

    assert code == Exit.FOUND
    assert sum("dlq" in f for f in doc["failures"]) == 12
    assert (counted["DeleteMessage"], counted["DeleteMessageBatch"]) == (0, 0)
    assert counted["ReceiveMessage"] >= 2 and counted["ChangeMessageVisibilityBatch"] == 2
    assert visible(world) == "12 visible, 0 held"


def test_messages_are_made_visible_again_when_the_peek_fails_midway(world: World) -> None:
    topic = parked_failures(world, 15)
    clients = world.clients()
    receives = calls(clients, "ReceiveMessage")

    def fail_the_second(**_: Any) -> None:
        if receives["ReceiveMessage"] == 2:
            raise clients.sqs.exceptions.ClientError(
                {"Error": {"Code": "InternalError", "Message": "try again"}}, "ReceiveMessage"
            )

    clients.sqs.meta.events.register("before-call.sqs.ReceiveMessage", fail_the_second)

    code, doc = trace_json(clients, "--topic", topic)

    assert code == Exit.FOUND
    assert f"DLQ {DLQ} not peeked: cannot peek at DLQ {DLQ}: InternalError: try again" in " ".join(doc["notes"])
    assert visible(world) == "15 visible, 0 held"


def test_messages_sqs_refuses_to_release_are_reported(world: World) -> None:
    topic = parked_failures(world, 3)
    clients = world.clients()

    def refuse_one(parsed: dict[str, Any], **_: Any) -> None:
        parsed["Failed"] = [{"Id": "0", "SenderFault": True, "Code": "ReceiptHandleIsInvalid", "Message": "gone"}]

    clients.sqs.meta.events.register("after-call.sqs.ChangeMessageVisibilityBatch", refuse_one)

    code, doc = trace_json(clients, "--topic", topic)

    assert code == Exit.FOUND
    assert (
        f"DLQ {DLQ}: 1 peeked messages could not be made visible again (ReceiptHandleIsInvalid); "
        "they reappear by themselves within 30 s"
    ) in doc["notes"]


def test_a_fifo_dlq_says_why_only_about_ten_messages_a_group_are_seen(world: World) -> None:
    topic = parked_failures(world, 14, dlq="orders-undeliverable.fifo", topic_name="orders.fifo")
    clients = world.clients()

    code, doc = trace_json(clients, "--topic", topic)

    assert code == Exit.FOUND
    note = next(n for n in doc["notes"] if n.startswith("DLQ orders-undeliverable.fifo: read"))
    assert "is FIFO: SQS hands out no more of a message group while some of it is held" in note
