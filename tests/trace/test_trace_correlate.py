"""Correlation against moto: the publisher's log says what each message was, the DLQ keeps its body."""

from __future__ import annotations

import io
import json
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
import yaml

from sync.cli.conventions import Exit
from sync.cli.trace import execute
from sync.errors import ObsError
from tests.trace.test_trace_moto import NOW, ago, parse, run_json
from tests.trace.trace_world import World, failure_event, failure_group

ENV = "moto"
TOPIC = "prod-jobs-critical"  # the example inventory's jobs-critical topic, named as in prod
QUEUE = "prod-critical"
DLQ = "prod-jobs-critical-undeliverable"
PUBLISHER_LOG = "/ecs/moto/api"


@pytest.fixture
def definitions(example_copy: Path) -> Path:
    """The example definitions plus a 'moto' environment: prod's layout in moto's account."""
    prod = yaml.safe_load((example_copy / "environments" / "prod.yaml").read_text())
    prod["name"] = ENV
    prod["aws"]["account_id"] = "123456789012"
    (example_copy / "environments" / f"{ENV}.yaml").write_text(yaml.safe_dump(prod, sort_keys=True))
    return example_copy


def run_env(world: World, definitions: Path, *argv: str) -> tuple[int, dict[str, Any]]:
    out = io.StringIO()
    args = parse("--env", ENV, *argv, "--format", "json", definitions=str(definitions))
    args.definitions = definitions
    code = execute(args, world.clients, now=NOW, out=out, err=io.StringIO())
    return code, json.loads(out.getvalue())


def park(world: World, topic: str, dlq_arn: str, bodies: list[str], **fifo: str) -> list[str]:
    """Publish while only the DLQ is subscribed, so it holds SNS's own envelopes: what a redrive leaves."""
    subscription = world.subscribe(topic, dlq_arn)
    ids = [
        world.publish(topic, body, **({k: f"{v}-{i}" for k, v in fifo.items()} if fifo else {}))
        for i, body in enumerate(bodies)
    ]
    world.sns.unsubscribe(SubscriptionArn=subscription)
    return ids


def test_env_trace_says_what_each_message_was_and_shows_the_dlq_copy(world: World, definitions: Path) -> None:
    topic = world.topic(TOPIC)
    world.enable_logging(topic)
    dlq_arn = world.queue(DLQ)
    ids = park(world, topic, dlq_arn, [json.dumps({"job_id": f"job-{n}", "kind": "upload"}) for n in range(3)])
    world.subscribe(topic, world.queue(QUEUE), dlq_arn=dlq_arn)
    failed = ids[:2]
    world.put_events(
        failure_group(topic),
        [
            (
                ago(30 - n) + timedelta(seconds=15),
                failure_event("access_denied", message_id=ident, topic_arn=topic, queue=QUEUE, published=ago(30 - n)),
            )
            for n, ident in enumerate(failed)
        ],
    )
    lines = [
        (ago(31), "GET /health 200"),
        (ago(30), f'INFO published {{"sns_message_id": "{ids[0]}", "job_id": "job-0", "user": 7}}'),
        (ago(29), json.dumps({"sns_message_id": ids[1], "job_id": "job-1"})),
        (ago(28), json.dumps({"sns_message_id": ids[2], "job_id": "job-2"})),
        (ago(27), '{"level": "error", "msg": "no id here"}'),
    ]
    world.put_events(PUBLISHER_LOG, lines)

    code, doc = run_env(world, definitions, "--topic", "jobs-critical", "--peek-dlq", "--since", "1h")

    assert code == Exit.FOUND
    assert doc["topic"] == topic
    found = {f["message_id"]: f for f in doc["failures"]}
    assert sorted(found) == sorted(failed)
    assert [found[i]["publisher"]["business_key"] for i in failed] == ["job-0", "job-1"]
    assert {found[i]["publisher"]["log_group"] for i in failed} == {PUBLISHER_LOG}
    assert [json.loads(found[i]["dlq"]["body"])["job_id"] for i in failed] == ["job-0", "job-1"]
    assert {found[i]["dlq"]["queue"] for i in failed} == {DLQ}
    assert not any("has no DLQ" in n for n in doc["notes"])
    visible = world.sqs.get_queue_attributes(QueueUrl=world.url(DLQ), AttributeNames=["ApproximateNumberOfMessages"])
    assert visible["Attributes"]["ApproximateNumberOfMessages"] == "3"  # peeking consumed nothing


def test_without_peek_the_dlq_is_not_touched(world: World, definitions: Path) -> None:
    topic = world.topic(TOPIC)
    world.enable_logging(topic)
    dlq_arn = world.queue(DLQ)
    ids = park(world, topic, dlq_arn, ["body"])
    event = failure_event("access_denied", message_id=ids[0], topic_arn=topic, queue=QUEUE, published=ago(20))
    world.put_events(failure_group(topic), [(ago(19), event)])

    code, doc = run_env(world, definitions, "--topic", TOPIC, "--queue", "critical")

    assert code == Exit.FOUND
    assert "dlq" not in doc["failures"][0]
    assert "publisher" not in doc["failures"][0]
    assert any("publisher log not read" in n and PUBLISHER_LOG in n for n in doc["notes"])
    received = world.sqs.receive_message(QueueUrl=world.url(DLQ), AttributeNames=["ApproximateReceiveCount"])
    assert received["Messages"][0]["Attributes"]["ApproximateReceiveCount"] == "1"  # our receive is the first


def test_fifo_dlq_found_from_the_live_subscription_shows_group_and_dedup_ids(world: World) -> None:
    topic = world.topic("orders.fifo")
    world.enable_logging(topic)
    dlq_arn = world.queue("orders-undeliverable.fifo")
    ids = park(
        world, topic, dlq_arn, ['{"order": 1}', '{"order": 2}'], MessageGroupId="tenant", MessageDeduplicationId="order"
    )
    world.subscribe(topic, world.queue("orders-billing.fifo"), dlq_arn=dlq_arn)
    events = [
        (
            ago(20 - n),
            failure_event(
                "queue_deleted", message_id=ident, topic_arn=topic, queue="orders-billing.fifo", published=ago(21 - n)
            ),
        )
        for n, ident in enumerate(ids)
    ]
    world.put_events(failure_group(topic), events)

    code, doc = run_json(world, "--topic", topic, "--peek-dlq")

    assert code == Exit.FOUND
    parked = {f["message_id"]: f["dlq"] for f in doc["failures"]}
    assert [parked[i]["message_group_id"] for i in ids] == ["tenant-0", "tenant-1"]
    assert [parked[i]["message_deduplication_id"] for i in ids] == ["order-0", "order-1"]
    assert [parked[i]["body"] for i in ids] == ['{"order": 1}', '{"order": 2}']
    checks = [c["checks"] for c in doc["causes"]]
    assert checks == [
        [{"checked": "queue existence", "outcome": "contradicts", "detail": "a queue with this name exists now"}]
    ]


def test_raw_delivery_dlq_messages_cannot_be_matched_and_say_so(world: World) -> None:
    topic = world.topic(TOPIC)
    world.enable_logging(topic)
    dlq_arn = world.queue(DLQ)
    world.subscribe(topic, dlq_arn, raw=True)
    world.publish(topic, "raw body")
    world.subscribe(topic, world.queue(QUEUE), dlq_arn=dlq_arn)
    event = failure_event("access_denied", message_id="m-raw", topic_arn=topic, queue=QUEUE, published=ago(20))
    world.put_events(failure_group(topic), [(ago(19), event)])

    code, doc = run_json(world, "--topic", topic, "--peek-dlq")

    assert code == Exit.FOUND
    assert "dlq" not in doc["failures"][0]
    assert any("1 raw-delivery messages carry no SNS message id" in n for n in doc["notes"])


def test_unknown_topic_in_an_environment_lists_the_known_ones(world: World, definitions: Path) -> None:
    with pytest.raises(
        ObsError, match="no topic 'nope' feeds a queue in environment 'moto': use one of: jobs-critical"
    ):
        run_env(world, definitions, "--topic", "nope")


def test_dlq_with_its_own_redrive_policy_is_not_peeked(world: World) -> None:
    topic = world.topic(TOPIC)
    world.enable_logging(topic)
    last = world.queue("prod-last-resort")
    redrive = json.dumps({"deadLetterTargetArn": last, "maxReceiveCount": "1"})
    dlq_arn = world.queue(DLQ, RedrivePolicy=redrive)
    park(world, topic, dlq_arn, ["body"])
    world.subscribe(topic, world.queue(QUEUE), dlq_arn=dlq_arn)
    event = failure_event("access_denied", message_id="m-1", topic_arn=topic, queue=QUEUE, published=ago(20))
    world.put_events(failure_group(topic), [(ago(19), event)])

    code, doc = run_json(world, "--topic", topic, "--peek-dlq")

    assert code == Exit.FOUND
    assert f"DLQ {DLQ} has its own redrive policy; not peeked so nothing is moved" in doc["notes"]
    received = world.sqs.receive_message(QueueUrl=world.url(DLQ), AttributeNames=["ApproximateReceiveCount"])
    assert received["Messages"][0]["Attributes"]["ApproximateReceiveCount"] == "1"


def test_declared_dlq_that_does_not_exist_is_a_note(world: World, definitions: Path) -> None:
    topic = world.topic(TOPIC)
    world.enable_logging(topic)
    world.subscribe(topic, world.queue(QUEUE))
    event = failure_event("access_denied", message_id="m-1", topic_arn=topic, queue=QUEUE, published=ago(20))
    world.put_events(failure_group(topic), [(ago(19), event)])

    code, doc = run_env(world, definitions, "--topic", TOPIC, "--peek-dlq")

    assert code == Exit.FOUND
    assert f"DLQ {DLQ} does not exist" in doc["notes"]
