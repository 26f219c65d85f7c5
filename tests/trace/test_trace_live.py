"""Live AWS behaviour against moto: other regions and accounts, silent logging, throttling, region typos."""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import boto3
import pytest
from botocore.awsrequest import AWSResponse, HTTPHeaders

from sync.aws.core.failures import Window
from sync.aws.core.target import TraceTarget
from sync.aws.reads.clients import Clients
from sync.aws.reads.logs import filter_events, read_failures
from sync.cli.conventions import Exit
from sync.cli.trace import execute
from sync.errors import ObsError
from tests.trace.test_trace_moto import NOW, TOPIC, ago, parse, run, run_json
from tests.trace.trace_world import ACCOUNT, REGION, World, failure_event, failure_group

OTHER_REGION = "eu-west-1"
OTHER_ACCOUNT = "999999999999"


def failed_to(world: World, topic: str, destination: str, sample: str = "queue_deleted", ident: str = "m-1") -> None:
    message = failure_event(sample, message_id=ident, topic_arn=topic, queue="", published=ago(20))
    doc = json.loads(message)
    doc["delivery"]["destination"] = destination
    world.put_events(failure_group(topic), [(ago(19), json.dumps(doc, separators=(",", ":")))])


def checks_of(doc: dict[str, Any]) -> list[tuple[str, str, str]]:
    return [(c["cause"], k["outcome"], k["detail"]) for c in doc["causes"] for k in c["checks"]]


def test_a_queue_in_another_region_is_checked_in_its_own_region(world: World) -> None:
    topic = world.topic(TOPIC)
    world.enable_logging(topic)
    queue_arn = world.queue("eu-jobs", region=OTHER_REGION)
    world.subscribe(topic, queue_arn)
    failed_to(world, topic, queue_arn)

    code, doc = run_json(world, "--topic", topic)

    assert code == Exit.FOUND
    assert checks_of(doc) == [("queue-deleted", "contradicts", "a queue with this name exists now")]


def test_a_kms_key_is_read_in_the_queue_region(world: World) -> None:
    topic = world.topic(TOPIC)
    world.enable_logging(topic)
    kms = boto3.client("kms", endpoint_url=world.endpoint, region_name=OTHER_REGION)
    key = kms.create_key(Description="eu billing")["KeyMetadata"]["KeyId"]
    kms.disable_key(KeyId=key)
    queue_arn = world.queue("eu-billing", region=OTHER_REGION, KmsMasterKeyId=key)
    failed_to(world, topic, queue_arn, sample="kms_disabled")

    code, doc = run_json(world, "--topic", topic)

    assert code == Exit.FOUND
    assert checks_of(doc) == [("kms-disabled", "confirms", f"KMS key {key} is Disabled")]


def test_a_queue_in_another_account_that_cannot_be_found_is_inconclusive(world: World) -> None:
    topic = world.topic(TOPIC)
    world.enable_logging(topic)
    failed_to(world, topic, f"arn:aws:sqs:{REGION}:{OTHER_ACCOUNT}:their-jobs")

    code, doc = run_json(world, "--topic", topic)

    assert code == Exit.FOUND
    ((cause, outcome, detail),) = checks_of(doc)
    assert (cause, outcome) == ("queue-deleted", "inconclusive")
    assert f"the queue is in account {OTHER_ACCOUNT}, which answers" in detail


def test_queues_of_one_name_in_two_regions_are_reported_apart(world: World) -> None:
    topic = world.topic(TOPIC)
    world.enable_logging(topic)
    here, there = world.queue("jobs"), world.queue("jobs", region=OTHER_REGION)
    failed_to(world, topic, here, ident="m-here")
    failed_to(world, topic, there.replace(OTHER_REGION, "eu-central-1"), ident="m-gone")

    code, doc = run_json(world, "--topic", topic)

    assert code == Exit.FOUND
    assert [(c["queue"], [k["outcome"] for k in c["checks"]]) for c in doc["causes"]] == [
        ("jobs", ["confirms"]),
        ("jobs", ["contradicts"]),
    ]


def test_subscription_attributes_are_read_only_for_failed_destinations(world: World) -> None:
    topic = world.topic(TOPIC)
    world.enable_logging(topic)
    for n in range(4):
        world.subscribe(topic, world.queue(f"fine-{n}"))
    failing = world.queue("failing")
    world.subscribe(topic, failing)
    failed_to(world, topic, failing, sample="access_denied")
    clients = world.clients()
    read: list[str] = []
    clients.sns.meta.events.register(
        "before-parameter-build.sns.GetSubscriptionAttributes",
        lambda params, **_: read.append(params["SubscriptionArn"]),
    )

    code, doc = run_json_with(clients, "--topic", topic)

    assert code == Exit.FOUND
    assert len(read) == 1
    assert next(n for n in doc["notes"] if "has no DLQ" in n).startswith("the subscription to failing has no DLQ")


@pytest.mark.parametrize(
    ("operation", "reason"),
    [
        ("GetSubscriptionAttributes", "sns:GetSubscriptionAttributes failed (AuthorizationError)"),
        ("ListSubscriptionsByTopic", "the topic's subscriptions could not be listed"),
    ],
)
def test_unreadable_subscriptions_give_no_false_no_dlq(world: World, operation: str, reason: str) -> None:
    topic = world.topic(TOPIC)
    world.enable_logging(topic)
    failing = world.queue("failing")
    world.subscribe(topic, failing)
    failed_to(world, topic, failing, sample="access_denied")
    clients = world.clients()

    def deny(**_: Any) -> None:
        raise clients.sns.exceptions.AuthorizationErrorException(
            {"Error": {"Code": "AuthorizationError", "Message": "no"}}, operation
        )

    clients.sns.meta.events.register(f"before-call.sns.{operation}", deny)

    code, doc = run_json_with(clients, "--topic", topic)

    assert code == Exit.FOUND
    assert not any("has no DLQ" in n for n in doc["notes"])
    assert (
        f"could not determine whether the subscription to failing has a DLQ ({reason}); "
        "without one its failed messages are gone"
    ) in doc["notes"]
    if operation == "ListSubscriptionsByTopic":
        assert any(n.startswith("subscriptions not read: cannot list the subscriptions of") for n in doc["notes"])


def run_json_with(clients: Any, *argv: str) -> tuple[int, dict[str, Any]]:
    out = io.StringIO()
    args = parse(*argv, "--format", "json")
    code = execute(args, lambda region, endpoint: clients, now=NOW, out=out, err=io.StringIO())
    return code, json.loads(out.getvalue())


# --- logging that is on but writes nothing ------------------------------------------------------------


def test_failures_counted_but_no_failure_group_is_a_broken_logging_role(world: World) -> None:
    topic = world.topic(TOPIC)
    world.enable_logging(topic)
    world.subscribe(topic, world.queue("prod-critical"))
    world.put_failed_metric(TOPIC, [(ago(30), 40)])

    with pytest.raises(ObsError) as caught:
        run(world, "--topic", topic)

    text = str(caught.value)
    assert text.startswith(
        f"cannot trust 'no failures' for {topic}: CloudWatch counted 40 failed deliveries in the window but SNS "
        f"logged none (log group {failure_group(topic)} was never created)"
    )
    assert "trust policy allow sns.amazonaws.com sts:AssumeRole" in text and "logs:PutLogEvents" in text


def test_failures_counted_but_none_logged_in_an_existing_group_is_an_error_too(world: World) -> None:
    topic = world.topic(TOPIC)
    world.enable_logging(topic)
    old = failure_event("access_denied", message_id="old", topic_arn=topic, queue="q", published=ago(300))
    world.put_events(failure_group(topic), [(ago(299), old)])
    world.put_failed_metric(TOPIC, [(ago(30), 3)])

    with pytest.raises(ObsError, match=f"but SNS logged none to log group {failure_group(topic)}, although"):
        run(world, "--topic", topic)


def test_failures_counted_on_a_topic_with_other_protocols_is_a_note_not_an_error(world: World) -> None:
    topic = world.topic(TOPIC)
    world.enable_logging(topic)
    world.sns.subscribe(TopicArn=topic, Protocol="lambda", Endpoint=f"arn:aws:lambda:{REGION}:{ACCOUNT}:function:f")
    world.put_failed_metric(TOPIC, [(ago(30), 40)])

    code, doc = run_json(world, "--topic", topic)

    assert code == 0
    assert any(
        n.startswith("NumberOfNotificationsFailed counted 40 for the topic (every protocol") for n in doc["notes"]
    )
    assert "the window reaches the last minute: failures in the last minute may not be logged yet" in doc["notes"]


# --- throttling and region typos ---------------------------------------------------------------------------


class _Raw:
    def __init__(self, body: bytes) -> None:
        self.body = body

    def stream(self, **_: Any) -> Iterator[bytes]:
        yield self.body


def test_a_throttled_page_is_retried_and_the_read_goes_on(world: World) -> None:
    topic = world.topic(TOPIC)
    world.enable_logging(topic)
    events = [
        (
            ago(50 - i),
            failure_event("access_denied", message_id=f"m-{i}", topic_arn=topic, queue="q", published=ago(50)),
        )
        for i in range(9)
    ]
    world.put_events(failure_group(topic), events)
    clients = world.clients()
    sends: list[str] = []

    def throttle_the_second(request: Any, **_: Any) -> AWSResponse | None:
        sends.append(request.url)
        if len(sends) != 2:
            return None
        body = b'{"__type":"ThrottlingException","message":"Rate exceeded"}'
        headers = HTTPHeaders.from_dict({"x-amzn-RequestId": "r-1", "Content-Type": "application/x-amz-json-1.1"})
        return AWSResponse(request.url, 400, headers, _Raw(body))

    handler: Any = throttle_the_second  # before-send handlers may answer in place of AWS
    clients.logs.meta.events.register("before-send.logs.FilterLogEvents", handler)

    def source(c: Any, group: str, start: Any, end: Any) -> Iterator[tuple[str, int | None]]:
        return filter_events(c, group, start, end, page_size=4)

    collector = read_failures(clients, TraceTarget(topic), Window(ago(60), NOW), frozenset(), source=source)

    assert sorted(f.message_id for f in collector.failures()) == [f"m-{i}" for i in range(9)]
    assert len(sends) == 4  # three pages, one of them sent twice


def test_a_region_typo_in_the_topic_arn_says_unknown_region(world: World) -> None:
    connected: list[str] = []

    def connect(region: str, endpoint: str | None) -> Clients:
        connected.append(region)
        return world.clients()

    with pytest.raises(ObsError) as caught:
        execute(parse("--topic", f"arn:aws:sns:us-eats-1:{ACCOUNT}:{TOPIC}"), connect, now=NOW)

    assert str(caught.value).startswith(
        f"topic arn:aws:sns:us-eats-1:{ACCOUNT}:{TOPIC} names unknown region 'us-eats-1' (not an AWS region of "
        "partition aws): check the spelling"
    )
    assert connected == []


def test_a_window_ending_well_before_now_has_no_last_minute_note(world: World) -> None:
    topic = world.topic(TOPIC)
    world.enable_logging(topic)
    failed_to(world, topic, world.queue("q"), sample="access_denied")

    code, doc = run_json(world, "--topic", topic, "--start", ago(30).isoformat(), "--end", ago(10).isoformat())

    assert code == Exit.FOUND
    assert not any("last minute" in n for n in doc["notes"])
    assert doc["window"]["read_until"] == (ago(5) + timedelta()).strftime("%Y-%m-%dT%H:%M:%S.000Z")


def test_slack_may_be_zero_and_a_bad_slack_names_its_flag(world: World) -> None:
    topic = world.topic(TOPIC)
    world.enable_logging(topic)
    failed_to(world, topic, world.queue("q"), sample="access_denied")

    code, doc = run_json(world, "--topic", topic, "--since", "1h", "--slack", "0m")

    assert code == Exit.FOUND
    assert doc["window"]["read_until"] == doc["window"]["end"]
    with pytest.raises(ObsError, match=r"^--slack '5x' is not a duration"):
        run(world, "--topic", topic, "--slack", "5x")
    with pytest.raises(ObsError, match=r"^--since '99999999999d' is longer than 366 days"):
        run(world, "--topic", topic, "--since", "99999999999d")


def test_metrics_of_a_day_are_per_minute(world: World) -> None:
    topic = world.topic(TOPIC)
    world.enable_logging(topic)
    failed_to(world, topic, world.queue("q"), sample="access_denied")
    world.put_failed_metric(TOPIC, [(ago(20 * 60), 1), (ago(20 * 60 - 1), 2)])

    code, text = run(world, "--topic", topic, "--since", "1d", "--engine", "filter")

    assert code == Exit.FOUND
    assert "NumberOfNotificationsFailed (Sum per 1 min): " in text
    assert "total 3" in text
