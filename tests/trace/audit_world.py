"""The estate of tests/trace/fixtures/audit built correctly in moto, in the environment's own account."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import boto3
import pytest

from sync.aws.reads.clients import core_session
from tests.trace.trace_world import World

ACCOUNT = "111111111111"  # the fixture environment's account, reached by assuming a role in moto
REGION = "us-east-1"
DEFINITIONS = Path(__file__).parent / "fixtures" / "audit"
ROLE = f"arn:aws:iam::{ACCOUNT}:role/sns-delivery-status"
SNS_TRUST = {
    "Version": "2012-10-17",
    "Statement": [{"Effect": "Allow", "Principal": {"Service": "sns.amazonaws.com"}, "Action": "sts:AssumeRole"}],
}
LOG_WRITES: dict[str, Any] = {
    "Version": "2012-10-17",
    "Statement": [
        {
            "Effect": "Allow",
            "Action": ["logs:CreateLogGroup", "logs:CreateLogStream", "logs:PutLogEvents"],
            "Resource": "arn:aws:logs:*:*:*",
        }
    ],
}


def arn(kind: str, name: str) -> str:
    return f"arn:aws:{kind}:{REGION}:{ACCOUNT}:{name}"


def allow_topics(queue: str, *topics: str) -> str:
    """A queue policy letting each topic send, as the SNS console writes it."""
    return json.dumps(
        {
            "Version": "2012-10-17",
            "Statement": [
                {
                    "Sid": f"topic-{index}",
                    "Effect": "Allow",
                    "Principal": {"Service": "sns.amazonaws.com"},
                    "Action": "sqs:SendMessage",
                    "Resource": arn("sqs", queue),
                    "Condition": {"ArnEquals": {"aws:SourceArn": topic}},
                }
                for index, topic in enumerate(topics)
            ],
        }
    )


def key_policy(*, sns: bool) -> str:
    statements: list[dict[str, Any]] = [
        {"Effect": "Allow", "Principal": {"AWS": f"arn:aws:iam::{ACCOUNT}:root"}, "Action": "kms:*", "Resource": "*"}
    ]
    if sns:
        statements.append(
            {
                "Effect": "Allow",
                "Principal": {"Service": "sns.amazonaws.com"},
                "Action": ["kms:GenerateDataKey*", "kms:Decrypt"],
                "Resource": "*",
            }
        )
    return json.dumps({"Version": "2012-10-17", "Statement": statements})


class Estate:
    """Clients in the environment's account, and the estate the fixture definitions declare, all correct."""

    def __init__(self, world: World, monkeypatch: pytest.MonkeyPatch) -> None:
        self.world = world
        sts = boto3.client("sts", endpoint_url=world.endpoint, region_name=REGION)
        role = f"arn:aws:iam::{ACCOUNT}:role/obs-audit"
        creds = sts.assume_role(RoleArn=role, RoleSessionName="obs-tests")["Credentials"]
        monkeypatch.setenv("AWS_ACCESS_KEY_ID", creds["AccessKeyId"])
        monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", creds["SecretAccessKey"])
        monkeypatch.setenv("AWS_SESSION_TOKEN", creds["SessionToken"])
        session = boto3.session.Session(botocore_session=core_session(), region_name=REGION)
        self.sqs = session.client("sqs", endpoint_url=world.endpoint)
        self.sns = session.client("sns", endpoint_url=world.endpoint)
        self.kms = session.client("kms", endpoint_url=world.endpoint)
        self.iam = session.client("iam", endpoint_url=world.endpoint)
        self.key = ""
        self.subscriptions: dict[str, str] = {}

    def url(self, name: str) -> str:
        return self.sqs.get_queue_url(QueueName=name)["QueueUrl"]

    def set_queue(self, name: str, **attributes: str) -> None:
        url = self.url(name)
        if "Policy" not in attributes:  # moto drops the policy on any SetQueueAttributes that does not carry it
            policy = (
                self.sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["Policy"])
                .get("Attributes", {})
                .get("Policy")
            )
            attributes = {**attributes, "Policy": policy} if policy else attributes
        self.sqs.set_queue_attributes(QueueUrl=url, Attributes=attributes)  # type: ignore[arg-type]

    def queue(self, name: str, **attributes: str) -> str:
        if name.endswith(".fifo"):
            attributes = {"FifoQueue": "true", **attributes}
        self.sqs.create_queue(QueueName=name, Attributes=attributes)  # type: ignore[arg-type]
        return arn("sqs", name)

    def build(self) -> None:
        self.iam.create_role(RoleName="sns-delivery-status", AssumeRolePolicyDocument=json.dumps(SNS_TRUST))
        self.iam.put_role_policy(
            RoleName="sns-delivery-status", PolicyName="logs", PolicyDocument=json.dumps(LOG_WRITES)
        )
        self.key = self.kms.create_key(Policy=key_policy(sns=True))["KeyMetadata"]["KeyId"]
        plan = [
            # queue, DLQ, topic, subscription DLQ, visibility, retention, raw, extra queue attributes
            ("test-orders", "test-orders-dlq", "test-orders", "test-orders-undeliverable", 66, 345600, False, 3),
            ("test-ledger", "test-ledger-dlq", "test-ledger", "test-ledger-undeliverable", 1320, 604800, True, 5),
        ]
        for queue, dlq, topic, parked, visibility, retention, raw, receives in plan:
            self._wire(queue, dlq, topic, parked, visibility, retention, raw, receives)
        self._wire(
            "test-billing.fifo",
            "test-billing-dlq.fifo",
            "test-billing.fifo",
            "test-billing-undeliverable.fifo",
            66,
            345600,
            False,
            3,
            ContentBasedDeduplication="true",
        )
        self.set_queue("test-orders", KmsMasterKeyId=self.key)

    def _wire(
        self,
        queue: str,
        dlq: str,
        topic: str,
        parked: str,
        visibility: int,
        retention: int,
        raw: bool,
        receives: int,
        **extra: str,
    ) -> None:
        fifo = {"FifoTopic": "true", "ContentBasedDeduplication": "true"} if topic.endswith(".fifo") else {}
        topic_arn = self.sns.create_topic(Name=topic, Attributes=fifo)["TopicArn"]
        self.sns.set_topic_attributes(
            TopicArn=topic_arn, AttributeName="SQSFailureFeedbackRoleArn", AttributeValue=ROLE
        )
        self.world.failure_roles[topic_arn] = ROLE  # moto keeps the role but never returns it
        dlq_arn = self.queue(dlq, MessageRetentionPeriod="1209600")
        self.queue(
            queue,
            VisibilityTimeout=str(visibility),
            MessageRetentionPeriod=str(retention),
            ReceiveMessageWaitTimeSeconds="20",
            RedrivePolicy=json.dumps({"deadLetterTargetArn": dlq_arn, "maxReceiveCount": receives}),
            Policy=allow_topics(queue, topic_arn),
            **extra,
        )
        parked_arn = self.queue(parked, Policy=allow_topics(parked, topic_arn))
        attributes = {"RedrivePolicy": json.dumps({"deadLetterTargetArn": parked_arn})}
        if raw:
            attributes["RawMessageDelivery"] = "true"
        self.subscriptions[queue] = self.sns.subscribe(
            TopicArn=topic_arn, Protocol="sqs", Endpoint=arn("sqs", queue), Attributes=attributes
        )["SubscriptionArn"]
