"""The pure audit checkers on answers in the shape real AWS gives, where moto cannot evaluate the policies."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from sync.aws.core.declared import QueueSpec, TopicSpec
from sync.aws.core.delivery import Target, check_encryption, check_queue_policy, check_subscription
from sync.aws.core.encryption import DISABLED, POLICY_DENIES, USABLE, WRONG_KIND, key_verdict
from sync.aws.core.facts import key_from
from sync.aws.core.findings import ERROR, INFO, WARNING, Finding, at_least
from sync.aws.core.topics import RoleFacts, TopicUse, check_role, check_topic
from sync.aws.core.wiring import check_dlq_retention, check_queue
from sync.aws.reads.survey import policy_document
from sync.expand.placement import delivery_principal

RECORDED = Path(__file__).parent / "fixtures" / "recorded"
ACCOUNT = "444455556666"
QUEUE_ARN = f"arn:aws:sqs:ap-east-1:{ACCOUNT}:prod-orders"
TOPIC_EAST = f"arn:aws:sns:us-east-1:{ACCOUNT}:prod-orders"  # a default region, feeding an opt-in one
KEY = f"arn:aws:kms:ap-east-1:{ACCOUNT}:key/1234abcd-12ab-34cd-56ef-1234567890ab"


def recorded(name: str) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads((RECORDED / f"{name}.json").read_text())
    return doc


def spec(**changes: Any) -> QueueSpec:
    base = QueueSpec(
        queue="orders",
        name="prod-orders",
        arn=QUEUE_ARN,
        region="ap-east-1",
        account_id=ACCOUNT,
        fifo=False,
        content_based_deduplication=None,
        retention_seconds=345600,
        max_processing_seconds=60,
        dlq_name="prod-orders-dlq",
        dlq_arn=f"arn:aws:sqs:ap-east-1:{ACCOUNT}:prod-orders-dlq",
        max_receive_count=3,
        topics=(TopicSpec("orders", TOPIC_EAST, None, None, None),),
    )
    return QueueSpec(**{**base.__dict__, **changes})


def checks(found: list[Finding]) -> list[tuple[str, str]]:
    return [(f.severity, f.check) for f in found]


@pytest.mark.parametrize(
    ("topic_region", "queue_region", "principal"),
    [
        ("us-east-1", "us-east-1", "sns.amazonaws.com"),
        ("us-east-1", "ap-east-1", "sns.ap-east-1.amazonaws.com"),  # default -> opt-in: the queue's region
        ("ap-east-1", "us-east-1", "sns.ap-east-1.amazonaws.com"),  # opt-in -> default: the topic's region
        ("me-south-1", "me-south-1", "sns.me-south-1.amazonaws.com"),
        ("us-east-1", "ap-northeast-3", "sns.ap-northeast-3.amazonaws.com"),  # Osaka is opt-in for SNS
    ],
)
def test_the_sns_principal_depends_on_both_regions(topic_region: str, queue_region: str, principal: str) -> None:
    topic = f"arn:aws:sns:{topic_region}:{ACCOUNT}:t"
    assert delivery_principal(topic, f"arn:aws:sqs:{queue_region}:{ACCOUNT}:q") == principal


def test_recorded_queue_attributes_give_visibility_polling_and_a_matching_redrive() -> None:
    live = recorded("get_queue_attributes")["Attributes"]

    found = check_queue(spec(), live)

    assert checks(found) == [("error", "visibility-timeout"), ("warning", "long-polling")]
    assert 'VisibilityTimeout":"66"' in found[0].fix


def test_a_queue_policy_naming_the_global_principal_does_not_admit_a_topic_feeding_an_opt_in_region() -> None:
    live = recorded("get_queue_attributes")["Attributes"]
    target = Target("orders", "prod-orders", QUEUE_ARN, "queue")

    (finding,) = check_queue_policy(target, live, [TOPIC_EAST])

    assert (finding.severity, finding.check) == (ERROR, "queue-policy")
    assert '"Principal":{"Service":"sns.ap-east-1.amazonaws.com"}' in finding.fix


def test_key_policies_are_judged_for_the_principal_of_the_region_pair() -> None:
    meta = recorded("describe_key_pending_deletion")["KeyMetadata"] | {"KeyState": "Enabled", "Enabled": True}
    regional = key_from(KEY, meta, recorded("get_key_policy_regional")["Policy"])
    global_only = key_from(KEY, meta, recorded("get_key_policy_global")["Policy"])
    principal = delivery_principal(TOPIC_EAST, QUEUE_ARN)

    assert key_verdict(regional, TOPIC_EAST, principal).state == USABLE
    assert key_verdict(global_only, TOPIC_EAST, principal).state == POLICY_DENIES
    other_topic = f"arn:aws:sns:us-east-1:{ACCOUNT}:staging-orders"  # outside the ArnLike condition
    assert key_verdict(regional, other_topic, principal).state == POLICY_DENIES


@pytest.mark.parametrize(
    ("answer", "state", "detail"),
    [
        ("describe_key_pending_deletion", DISABLED, "is PendingDeletion"),
        ("describe_key_asymmetric", WRONG_KIND, "is RSA_2048 for SIGN_VERIFY, not a symmetric encryption key"),
    ],
)
def test_a_key_nobody_can_use_is_one_error_even_without_a_topic(answer: str, state: str, detail: str) -> None:
    key = key_from(KEY, recorded(answer)["KeyMetadata"], recorded("get_key_policy_regional")["Policy"])
    live = recorded("get_queue_attributes")["Attributes"]
    assert key_verdict(key, TOPIC_EAST).state == state

    for topics in ([TOPIC_EAST, f"arn:aws:sns:us-east-1:{ACCOUNT}:other"], []):
        (finding,) = check_encryption(Target("orders", "prod-orders-dlq", QUEUE_ARN, "DLQ"), live, key, topics)
        assert (finding.severity, finding.check) == (ERROR, "encryption")
        assert detail in finding.live


def test_the_aws_managed_key_matters_only_where_a_topic_sends() -> None:
    key = key_from("alias/aws/sqs", {"KeyManager": "AWS", "KeyState": "Enabled"})
    live = {"KmsMasterKeyId": "alias/aws/sqs"}
    target = Target("orders", "prod-orders", QUEUE_ARN, "queue")

    assert check_encryption(target, live, key, []) == []
    assert checks(check_encryption(target, live, key, [TOPIC_EAST])) == [(ERROR, "encryption")]


def test_an_url_encoded_trust_policy_with_a_source_account_condition_is_understood() -> None:
    role = recorded("get_role_encoded")["Role"]
    logs = {"Effect": "Allow", "Action": "logs:*", "Resource": "arn:aws:logs:*:*:log-group:sns/*"}
    facts = RoleFacts(
        role["Arn"], True, policy_document(role["AssumeRolePolicyDocument"]), (json.dumps({"Statement": [logs]}),)
    )

    assert check_role(TopicUse(f"arn:aws:sns:us-east-1:{ACCOUNT}:prod-orders"), facts) == []
    other_account = check_role(TopicUse("arn:aws:sns:us-east-1:111122223333:prod-orders"), facts)
    denied = "the trust policy does not allow sns.amazonaws.com sts:AssumeRole from "
    assert [f.live for f in other_account] == [denied + "arn:aws:sns:us-east-1:111122223333:prod-orders"]


def test_a_log_permission_on_other_groups_or_denied_is_missing() -> None:
    trust = json.dumps(
        {"Statement": [{"Effect": "Allow", "Principal": {"Service": "sns.amazonaws.com"}, "Action": "sts:AssumeRole"}]}
    )
    elsewhere = {"Effect": "Allow", "Action": "logs:*", "Resource": f"arn:aws:logs:*:{ACCOUNT}:log-group:/ecs/*"}
    everywhere = {"Effect": "Allow", "Action": "logs:*", "Resource": "*"}
    denied = {"Effect": "Deny", "Action": "logs:PutLogEvents", "Resource": "*"}
    topic = TopicUse(f"arn:aws:sns:us-east-1:{ACCOUNT}:prod-orders")

    wrong_group = check_role(topic, RoleFacts("r", True, trust, (json.dumps({"Statement": [elsewhere]}),)))
    with_deny = check_role(topic, RoleFacts("r", True, trust, (json.dumps({"Statement": [everywhere, denied]}),)))

    assert [f.live for f in wrong_group] == ["no logs:CreateLogGroup, logs:CreateLogStream, logs:PutLogEvents"]
    assert [f.live for f in with_deny] == ["no logs:PutLogEvents"]


def test_dlq_retention_counts_from_the_first_enqueue_for_standard_queues_only() -> None:
    source, dlq = {"MessageRetentionPeriod": "345600"}, {"MessageRetentionPeriod": "345600"}

    (finding,) = check_dlq_retention(spec(), source, dlq)

    assert (finding.check, finding.resource) == ("dlq-retention", "prod-orders-dlq")
    assert '"MessageRetentionPeriod":"691200"' in finding.fix
    assert check_dlq_retention(spec(fifo=True), source, dlq) == []  # FIFO resets the enqueue time on the move


def test_severity_floor_keeps_the_more_serious_findings_in_report_order() -> None:
    def made(severity: str, queue: str) -> Finding:
        return Finding(severity, "c", queue, "r", "d", "l", "w", "f")

    found = [made(INFO, "a"), made(WARNING, "b"), made(ERROR, "c"), made(ERROR, "a")]

    assert [(f.severity, f.queue) for f in at_least(found, WARNING)] == [
        ("error", "a"),
        ("error", "c"),
        ("warning", "b"),
    ]
    assert len(at_least(found, INFO)) == 4


def test_subscriptions_pending_in_the_wrong_format_or_filtered_are_reported() -> None:
    queue = spec(region="us-east-1", arn=f"arn:aws:sqs:us-east-1:{ACCOUNT}:prod-orders")
    topic = TopicSpec("orders", TOPIC_EAST, None, None, raw_message_delivery=True)
    live = {"PendingConfirmation": "true", "RawMessageDelivery": "false", "FilterPolicy": '{"kind":["a"]}'}

    found = check_subscription(queue, topic, "PendingConfirmation", live, None)

    assert checks(found) == [
        (ERROR, "subscription-pending"),
        (ERROR, "raw-delivery"),
        (INFO, "filter-policy"),
        (WARNING, "subscription-dlq"),
    ]
    assert "--attribute-name RawMessageDelivery --attribute-value true" in found[1].fix


def test_topics_must_match_the_declared_fifo_and_a_fifo_topic_should_feed_fifo_queues() -> None:
    fifo_topic = f"arn:aws:sns:us-east-1:{ACCOUNT}:prod-orders.fifo"
    standard_queue = spec()
    live = {"FifoTopic": "false", "SQSFailureFeedbackRoleArn": "r"}

    declared_fifo = check_topic(TopicUse(fifo_topic, (spec(fifo=True),)), live, None)
    to_standard = check_topic(TopicUse(fifo_topic, (standard_queue,)), {**live, "FifoTopic": "true"}, None)

    assert checks(declared_fifo) == [(ERROR, "fifo")]
    assert checks(to_standard) == [(WARNING, "fifo")]


def test_without_a_declared_processing_time_visibility_is_only_mentioned() -> None:
    live = recorded("get_queue_attributes")["Attributes"] | {"ReceiveMessageWaitTimeSeconds": "20"}

    assert checks(check_queue(spec(max_processing_seconds=None), live)) == [(INFO, "visibility-timeout")]


def test_an_unreadable_logging_role_is_a_warning_that_names_the_reads() -> None:
    role = RoleFacts(f"arn:aws:iam::{ACCOUNT}:role/logs", None, unread="IAM read failed (AccessDenied)")

    (finding,) = check_role(TopicUse(TOPIC_EAST), role)

    assert (finding.severity, finding.live) == (WARNING, "IAM read failed (AccessDenied)")
    assert "iam:GetRole" in finding.fix and "iam:GetPolicyVersion" in finding.fix
