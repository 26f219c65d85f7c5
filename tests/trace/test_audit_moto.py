"""obs audit end to end against moto: a clean estate passes, each seeded misconfiguration is found once."""

from __future__ import annotations

import argparse
import io
import json
from collections.abc import Callable
from typing import Any

import pytest

from sync.aws.reads.clients import Clients
from sync.cli.app import main
from sync.cli.audit import execute, register
from sync.cli.conventions import Exit
from sync.errors import ObsError
from tests.trace.audit_world import (
    ACCOUNT,
    DEFINITIONS,
    LOG_WRITES,
    Estate,
    allow_topics,
    arn,
    key_policy,
)
from tests.trace.trace_world import World

ORDERS_TOPIC = arn("sns", "test-orders")


@pytest.fixture
def estate(world: World, monkeypatch: pytest.MonkeyPatch) -> Estate:
    built = Estate(world, monkeypatch)
    built.build()
    return built


def parse(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="obs")
    register(parser.add_subparsers())
    args = parser.parse_args(["audit", "--env", "test", *argv])
    args.definitions = DEFINITIONS
    return args


def run(estate: Estate, *argv: str, clients: Clients | None = None) -> tuple[int, dict[str, Any]]:
    out = io.StringIO()
    code = execute(parse(*argv, "--format", "json"), lambda r, e: clients or estate.world.clients(r, e), out)
    return code, json.loads(out.getvalue())


def found(doc: dict[str, Any]) -> list[tuple[str, str, str]]:
    return [(f["severity"], f["check"], f["queue"]) for f in doc["findings"]]


def test_the_estate_as_declared_passes_at_every_severity(estate: Estate) -> None:
    code, doc = run(estate, "--severity", "info")

    assert (code, found(doc)) == (0, [])
    assert doc["queues"] == ["orders", "ledger", "billing"]


def _set_subscription(name: str, value: str) -> Callable[[Estate], None]:
    def change(e: Estate) -> None:
        e.sns.set_subscription_attributes(
            SubscriptionArn=e.subscriptions["test-orders"], AttributeName=name, AttributeValue=value
        )

    return change


def _role_policy(document: dict[str, Any]) -> Callable[[Estate], None]:
    def change(e: Estate) -> None:
        e.iam.put_role_policy(RoleName="sns-delivery-status", PolicyName="logs", PolicyDocument=json.dumps(document))

    return change


def _twenty_one_statements(e: Estate) -> None:
    doc = json.loads(allow_topics("test-orders", ORDERS_TOPIC))
    doc["Statement"] += [
        {
            "Sid": f"reader-{i}",
            "Effect": "Allow",
            "Principal": {"AWS": f"arn:aws:iam::{ACCOUNT}:root"},
            "Action": "sqs:ReceiveMessage",
            "Resource": arn("sqs", "test-orders"),
        }
        for i in range(20)
    ]
    e.set_queue("test-orders", Policy=json.dumps(doc))


def _logging_off(e: Estate) -> None:
    e.world.failure_roles.pop(ORDERS_TOPIC)


def _no_such_role(e: Estate) -> None:
    e.world.failure_roles[ORDERS_TOPIC] = f"arn:aws:iam::{ACCOUNT}:role/deleted-logging-role"


def _broken_trust(e: Estate) -> None:
    trust = {
        "Version": "2012-10-17",
        "Statement": [
            {"Effect": "Allow", "Principal": {"Service": "lambda.amazonaws.com"}, "Action": "sts:AssumeRole"}
        ],
    }
    e.iam.update_assume_role_policy(RoleName="sns-delivery-status", PolicyDocument=json.dumps(trust))


SEEDED: list[tuple[str, Callable[[Estate], object], list[tuple[str, str, str]]]] = [
    (
        "queue deleted",
        lambda e: e.sqs.delete_queue(QueueUrl=e.url("test-ledger")),
        [("error", "queue-missing", "ledger")],
    ),
    (
        "DLQ deleted",
        lambda e: e.sqs.delete_queue(QueueUrl=e.url("test-orders-dlq")),
        [("error", "dlq-missing", "orders")],
    ),
    (
        "subscription DLQ deleted",
        lambda e: e.sqs.delete_queue(QueueUrl=e.url("test-orders-undeliverable")),
        [("error", "subscription-dlq", "orders")],
    ),
    (
        "topic deleted",
        lambda e: e.sns.delete_topic(TopicArn=arn("sns", "test-ledger")),
        [("error", "topic-missing", "ledger")],
    ),
    (
        "subscription removed",
        lambda e: e.sns.unsubscribe(SubscriptionArn=e.subscriptions["test-orders"]),
        [("error", "subscription-missing", "orders")],
    ),
    (
        "redrive to another queue",
        lambda e: e.set_queue(
            "test-orders",
            RedrivePolicy=json.dumps({"deadLetterTargetArn": arn("sqs", "test-ledger-dlq"), "maxReceiveCount": 3}),
        ),
        [("error", "redrive-policy", "orders")],
    ),
    (
        "maxReceiveCount differs",
        lambda e: e.set_queue(
            "test-orders",
            RedrivePolicy=json.dumps({"deadLetterTargetArn": arn("sqs", "test-orders-dlq"), "maxReceiveCount": 10}),
        ),
        [("error", "max-receive-count", "orders")],
    ),
    (
        "visibility below 1.1 x processing",
        lambda e: e.set_queue("test-ledger", VisibilityTimeout="1200"),
        [("error", "visibility-timeout", "ledger")],
    ),
    (
        "short polling",
        lambda e: e.set_queue("test-orders", ReceiveMessageWaitTimeSeconds="0"),
        [("warning", "long-polling", "orders")],
    ),
    (
        "retention shorter than declared",
        lambda e: e.set_queue("test-ledger", MessageRetentionPeriod="86400"),
        [("error", "retention", "ledger")],
    ),
    (
        "retention longer than declared",
        lambda e: e.set_queue("test-ledger", MessageRetentionPeriod="691200"),
        [("warning", "retention", "ledger")],
    ),
    (
        "DLQ keeps messages no longer than its queue",
        lambda e: e.set_queue("test-ledger-dlq", MessageRetentionPeriod="604800"),
        [("error", "dlq-retention", "ledger")],
    ),
    (
        "AWS-managed key on a topic-fed queue",
        lambda e: e.set_queue("test-ledger", KmsMasterKeyId="alias/aws/sqs"),
        [("error", "encryption", "ledger")],
    ),
    (
        "customer key without SNS",
        lambda e: e.kms.put_key_policy(KeyId=e.key, PolicyName="default", Policy=key_policy(sns=False)),
        [("error", "encryption", "orders")],
    ),
    ("key disabled", lambda e: e.kms.disable_key(KeyId=e.key), [("error", "encryption", "orders")]),
    (
        "key pending deletion",
        lambda e: e.kms.schedule_key_deletion(KeyId=e.key, PendingWindowInDays=7),
        [("error", "encryption", "orders")],
    ),
    (
        "queue policy without the topic",
        lambda e: e.set_queue("test-orders", Policy=allow_topics("test-orders")),
        [("error", "queue-policy", "orders")],
    ),
    ("queue policy over 20 statements", _twenty_one_statements, [("error", "queue-policy-size", "orders")]),
    (
        "subscription DLQ policy without the topic",
        lambda e: e.set_queue("test-orders-undeliverable", Policy=allow_topics("test-orders-undeliverable")),
        [("error", "queue-policy", "orders")],
    ),
    ("raw delivery differs", _set_subscription("RawMessageDelivery", "true"), [("error", "raw-delivery", "orders")]),
    ("subscription DLQ unset", _set_subscription("RedrivePolicy", ""), [("error", "subscription-dlq", "orders")]),
    ("delivery logging off", _logging_off, [("warning", "delivery-logging", "orders")]),
    ("logging role gone", _no_such_role, [("error", "delivery-logging-role", "orders")]),
    (
        "logging role not trusted by SNS",
        _broken_trust,
        [
            ("error", "delivery-logging-role", "billing"),
            ("error", "delivery-logging-role", "ledger"),
            ("error", "delivery-logging-role", "orders"),
        ],
    ),
    (
        "logging role cannot write logs",
        _role_policy({**LOG_WRITES, "Statement": [{**LOG_WRITES["Statement"][0], "Action": "logs:CreateLogGroup"}]}),
        [
            ("error", "delivery-logging-role", "billing"),
            ("error", "delivery-logging-role", "ledger"),
            ("error", "delivery-logging-role", "orders"),
        ],
    ),
    (
        "FIFO queue deduplication differs",
        lambda e: e.set_queue("test-billing.fifo", ContentBasedDeduplication="false"),
        [("error", "content-deduplication", "billing")],
    ),
    (
        "FIFO topic deduplication differs",
        lambda e: e.sns.set_topic_attributes(
            TopicArn=arn("sns", "test-billing.fifo"), AttributeName="ContentBasedDeduplication", AttributeValue="false"
        ),
        [("error", "content-deduplication", "billing")],
    ),
]


@pytest.mark.parametrize(("seed", "expected"), [(s, e) for _, s, e in SEEDED], ids=[n for n, _, _ in SEEDED])
def test_each_seeded_misconfiguration_is_found_alone(
    estate: Estate, seed: Callable[[Estate], object], expected: list[tuple[str, str, str]]
) -> None:
    seed(estate)

    code, doc = run(estate)

    assert (code, found(doc)) == (Exit.FOUND, expected)
    for finding in doc["findings"]:
        assert finding["declared"] and finding["live"] and finding["why"] and finding["fix"]


def test_a_finding_below_the_severity_floor_exits_0_and_is_shown_at_info(estate: Estate) -> None:
    _set_subscription("FilterPolicy", json.dumps({"kind": ["invoice"]}))(estate)

    code, doc = run(estate)
    assert (code, found(doc)) == (0, [])
    code, doc = run(estate, "--severity", "info")
    assert (code, found(doc)) == (Exit.FOUND, [("info", "filter-policy", "orders")])
    assert '{"kind": ["invoice"]}' in doc["findings"][0]["live"]


def test_one_queue_is_audited_alone(estate: Estate) -> None:
    estate.set_queue("test-ledger", VisibilityTimeout="30")

    code, doc = run(estate, "--queue", "orders")

    assert (code, doc["queues"], found(doc)) == (0, ["orders"], [])


def test_text_and_markdown_name_the_queue_the_values_and_the_exact_fix(estate: Estate) -> None:
    estate.set_queue("test-orders", VisibilityTimeout="30")
    out = io.StringIO()

    code = execute(parse(), estate.world.clients, out)

    assert code == Exit.FOUND
    text = out.getvalue()
    assert "1 finding at or above warning (1 error)" in text
    assert "ERROR visibility-timeout: orders: test-orders" in text
    assert "live:     VisibilityTimeout 30 s" in text
    url = f"https://sqs.us-east-1.amazonaws.com/{ACCOUNT}/test-orders"
    assert f"aws sqs set-queue-attributes --region us-east-1 --queue-url {url} --attributes " in text
    assert """'{"VisibilityTimeout":"66"}'""" in text
    markdown = io.StringIO()
    execute(parse("--format", "markdown"), estate.world.clients, markdown)
    assert "| error | orders | visibility-timeout | test-orders |" in markdown.getvalue()


def test_credentials_of_another_account_are_an_error_naming_the_account(
    world: World, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["--definitions", str(DEFINITIONS), "audit", "--env", "test"])

    assert code == 1
    err = capsys.readouterr().err
    assert "credentials are for account 123456789012, the environment lives in 111111111111" in err
    assert "Traceback" not in err


def test_access_denied_is_an_error_naming_the_missing_permission(estate: Estate) -> None:
    clients = estate.world.clients()

    def deny(**_: Any) -> None:
        raise clients.sqs.exceptions.ClientError(
            {"Error": {"Code": "AccessDenied", "Message": "not authorized"}}, "GetQueueAttributes"
        )

    clients.sqs.meta.events.register("before-call.sqs.GetQueueAttributes", deny)

    with pytest.raises(ObsError) as caught:
        run(estate, clients=clients)

    assert "access denied" in str(caught.value)
    assert "grant the caller sqs:GetQueueUrl and sqs:GetQueueAttributes" in str(caught.value)


def test_an_unknown_queue_is_refused(estate: Estate) -> None:
    with pytest.raises(ObsError, match="no queue 'nope' in environment 'test': use one of: billing, ledger, orders"):
        run(estate, "--queue", "nope")


def test_no_credentials_at_all_is_one_clear_error(
    world: World, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("AWS_ACCESS_KEY_ID")
    monkeypatch.delenv("AWS_SECRET_ACCESS_KEY")

    code = main(["--definitions", str(DEFINITIONS), "audit", "--env", "test"])

    assert code == 1
    assert "no usable AWS credentials" in capsys.readouterr().err


def test_plan_live_prints_the_settings_the_monitors_depend_on_before_the_plan(
    estate: Estate, capsys: pytest.CaptureFixture[str]
) -> None:
    estate.set_queue("test-ledger", MessageRetentionPeriod="86400")
    estate.set_queue("test-orders", ReceiveMessageWaitTimeSeconds="0")  # no monitor is built on polling

    code = main(["--definitions", str(DEFINITIONS), "plan", "--env", "test", "--offline", "--live"])

    out, err = capsys.readouterr()
    assert code == 0
    assert "obs audit test: 1 live settings the monitors depend on differ (obs audit --env test):" in err
    assert (
        "ERROR retention: ledger: test-ledger: MessageRetentionPeriod 86400 s (declared retention_seconds 604800)"
        in err
    )
    assert "long-polling" not in err
    assert "Plan: 10 to create" in out


def test_plan_live_with_nothing_wrong_says_so(estate: Estate, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["--definitions", str(DEFINITIONS), "plan", "--env", "test", "--offline", "--live", "--format", "json"])

    out, err = capsys.readouterr()
    assert code == 0
    assert "the live retention and DLQ settings the monitors depend on match the definitions" in err
    assert json.loads(out)  # stdout stays one JSON document


def test_plan_live_when_the_audit_cannot_run_is_one_clear_error(
    world: World, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["--definitions", str(DEFINITIONS), "plan", "--env", "test", "--offline", "--live"])

    out, err = capsys.readouterr()
    assert (code, out) == (1, "")
    assert err.startswith("error: cannot audit test: the credentials are for account 123456789012")


def test_an_environment_in_another_region_is_read_there(estate: Estate) -> None:
    args = parse("--format", "json")
    args.env = "eu"  # the same names as test, in eu-west-1, where nothing was built
    out = io.StringIO()

    code = execute(args, estate.world.clients, out)

    doc = json.loads(out.getvalue())
    assert (code, doc["region"]) == (Exit.FOUND, "eu-west-1")
    assert sorted(found(doc)) == sorted(
        [
            ("error", check, queue)
            for check in ("queue-missing", "topic-missing")
            for queue in ("billing", "ledger", "orders")
        ]
    )
    assert {f["resource"] for f in doc["findings"] if f["check"] == "topic-missing"} == {
        "arn:aws:sns:eu-west-1:111111111111:test-billing.fifo",
        "arn:aws:sns:eu-west-1:111111111111:test-ledger",
        "arn:aws:sns:eu-west-1:111111111111:test-orders",
    }
