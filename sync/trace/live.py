"""Read the live configuration a cause can be confirmed against: queues, keys, subscriptions (I/O)."""

from __future__ import annotations

import json
from dataclasses import dataclass

from botocore.exceptions import BotoCoreError, ClientError

from .aws import Clients, aws_errors, error_code
from .events import queue_name_of
from .target import TraceTarget

AWS_MANAGED_SQS_KEY = "alias/aws/sqs"
_MISSING_QUEUE = {"AWS.SimpleQueueService.NonExistentQueue", "QueueDoesNotExist"}


@dataclass(frozen=True)
class KeyFacts:
    key: str  # as the queue names it: id, ARN or alias
    manager: str = ""  # AWS or CUSTOMER
    state: str = ""  # Enabled, Disabled, PendingDeletion, NotFound, or "" when unread
    policy: str = ""
    unread: str = ""  # why something could not be read


@dataclass(frozen=True)
class QueueFacts:
    queue: str
    exists: bool | None  # None when the read failed
    policy: str = ""
    key: KeyFacts | None = None
    unread: str = ""


@dataclass(frozen=True)
class Subscription:
    arn: str
    queue_arn: str
    raw_delivery: bool
    dlq_arn: str  # from the RedrivePolicy, "" when none


def _reason(exc: Exception) -> str:
    return error_code(exc) if isinstance(exc, ClientError) else type(exc).__name__


def queue_facts(clients: Clients, queue: str, account_id: str) -> QueueFacts:
    try:
        url = clients.sqs.get_queue_url(QueueName=queue, QueueOwnerAWSAccountId=account_id)["QueueUrl"]
        attributes = clients.sqs.get_queue_attributes(
            QueueUrl=url, AttributeNames=["Policy", "KmsMasterKeyId", "SqsManagedSseEnabled"]
        ).get("Attributes", {})
    except ClientError as exc:
        if error_code(exc) in _MISSING_QUEUE:
            return QueueFacts(queue=queue, exists=False)
        return QueueFacts(queue=queue, exists=None, unread=f"sqs:GetQueueAttributes failed ({_reason(exc)})")
    except BotoCoreError as exc:
        return QueueFacts(queue=queue, exists=None, unread=f"SQS unreachable ({_reason(exc)})")
    key = attributes.get("KmsMasterKeyId", "")
    return QueueFacts(
        queue=queue,
        exists=True,
        policy=attributes.get("Policy", ""),
        key=key_facts(clients, key) if key else None,
    )


def key_facts(clients: Clients, key: str) -> KeyFacts:
    if key == AWS_MANAGED_SQS_KEY or key.endswith(":" + AWS_MANAGED_SQS_KEY):
        return KeyFacts(key=key, manager="AWS", state="Enabled")  # its policy never admits SNS
    try:
        meta = clients.kms.describe_key(KeyId=key)["KeyMetadata"]
    except ClientError as exc:
        if error_code(exc) == "NotFoundException":
            return KeyFacts(key=key, state="NotFound")
        return KeyFacts(key=key, unread=f"kms:DescribeKey failed ({_reason(exc)})")
    except BotoCoreError as exc:
        return KeyFacts(key=key, unread=f"KMS unreachable ({_reason(exc)})")
    facts = KeyFacts(key=key, manager=meta.get("KeyManager", ""), state=meta.get("KeyState", ""))
    try:
        policy = clients.kms.get_key_policy(KeyId=meta["KeyId"], PolicyName="default")["Policy"]
    except (ClientError, BotoCoreError) as exc:
        return KeyFacts(facts.key, facts.manager, facts.state, unread=f"kms:GetKeyPolicy failed ({_reason(exc)})")
    return KeyFacts(facts.key, facts.manager, facts.state, policy=policy)


def subscriptions(clients: Clients, target: TraceTarget) -> dict[str, Subscription]:
    """The topic's SQS subscriptions by queue name."""
    found: dict[str, Subscription] = {}
    with aws_errors(f"list the subscriptions of {target.topic_arn}", "sns:ListSubscriptionsByTopic"):
        paginator = clients.sns.get_paginator("list_subscriptions_by_topic")
        for page in paginator.paginate(TopicArn=target.topic_arn):
            for sub in page.get("Subscriptions", []):
                arn = sub.get("SubscriptionArn", "")
                if sub.get("Protocol") != "sqs" or not arn.startswith("arn:"):
                    continue  # pending confirmations have no ARN
                attributes = clients.sns.get_subscription_attributes(SubscriptionArn=arn).get("Attributes", {})
                endpoint = sub.get("Endpoint", "")
                found[queue_name_of(endpoint)] = Subscription(
                    arn=arn,
                    queue_arn=endpoint,
                    raw_delivery=attributes.get("RawMessageDelivery", "false").lower() == "true",
                    dlq_arn=_dlq_arn(attributes.get("RedrivePolicy", "")),
                )
    return found


def _dlq_arn(redrive: str) -> str:
    try:
        doc = json.loads(redrive) if redrive else {}
    except ValueError:
        return ""
    return str(doc.get("deadLetterTargetArn", "")) if isinstance(doc, dict) else ""
