"""Read the live configuration a cause can be confirmed against: queues, keys, subscriptions (I/O)."""

from __future__ import annotations

from dataclasses import replace

from botocore.exceptions import BotoCoreError, ClientError

from sync.aws.core.events import arn_account, arn_region, queue_name_of
from sync.aws.core.facts import AWS_MANAGED_SQS_KEY, KeyFacts, Listed, QueueFacts, Subscription, dlq_arn_of, key_from
from sync.aws.core.target import TraceTarget
from sync.aws.reads.clients import DENIED, NONEXISTENT_QUEUE, Clients, aws_errors, error_code


def _reason(exc: Exception) -> str:
    return error_code(exc) if isinstance(exc, ClientError) else type(exc).__name__


def queue_facts(clients: Clients, queue_arn: str, topic_account: str) -> QueueFacts:
    """The queue as it is now, read in its own region and account."""
    queue, owner = queue_name_of(queue_arn), arn_account(queue_arn) or topic_account
    sqs = clients.in_region(arn_region(queue_arn)).sqs
    try:
        url = sqs.get_queue_url(QueueName=queue, QueueOwnerAWSAccountId=owner)["QueueUrl"]
        attributes = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["All"]).get("Attributes", {})
    except ClientError as exc:
        code = error_code(exc)
        if owner != topic_account and (code in NONEXISTENT_QUEUE or code in DENIED):
            # SQS answers a queue we may not see in another account just as it answers a deleted one
            unread = f"the queue is in account {owner}, which answers {code} whether or not it exists"
            return QueueFacts(queue=queue, exists=None, unread=unread, code=code)
        if code in NONEXISTENT_QUEUE:
            return QueueFacts(queue=queue, exists=False)
        unread = f"sqs:GetQueueAttributes failed ({_reason(exc)})"
        return QueueFacts(queue=queue, exists=None, unread=unread, code=code)
    except BotoCoreError as exc:
        return QueueFacts(queue=queue, exists=None, unread=f"SQS unreachable ({_reason(exc)})")
    key = attributes.get("KmsMasterKeyId", "")
    return QueueFacts(
        queue=queue,
        exists=True,
        policy=attributes.get("Policy", ""),
        key=key_facts(clients.in_region(arn_region(queue_arn)), key) if key else None,
        attributes={str(k): v for k, v in attributes.items()},
    )


def key_facts(clients: Clients, key: str) -> KeyFacts:
    if key == AWS_MANAGED_SQS_KEY or key.endswith(":" + AWS_MANAGED_SQS_KEY):
        return KeyFacts(key=key, manager="AWS", state="Enabled")  # its policy never admits SNS
    try:
        meta = clients.kms.describe_key(KeyId=key)["KeyMetadata"]
    except ClientError as exc:
        if error_code(exc) == "NotFoundException":
            return KeyFacts(key=key, state="NotFound")
        return KeyFacts(key=key, unread=f"kms:DescribeKey failed ({_reason(exc)})", code=error_code(exc))
    except BotoCoreError as exc:
        return KeyFacts(key=key, unread=f"KMS unreachable ({_reason(exc)})")
    facts = key_from(key, {str(k): v for k, v in meta.items()})
    try:
        policy = clients.kms.get_key_policy(KeyId=meta["KeyId"], PolicyName="default")["Policy"]
    except ClientError as exc:
        return replace(facts, unread=f"kms:GetKeyPolicy failed ({_reason(exc)})", code=error_code(exc))
    except BotoCoreError as exc:
        return replace(facts, unread=f"kms:GetKeyPolicy failed ({_reason(exc)})")
    return replace(facts, policy=policy)


def list_subscriptions(clients: Clients, target: TraceTarget) -> tuple[Listed, ...]:
    with aws_errors(f"list the subscriptions of {target.topic_arn}", "sns:ListSubscriptionsByTopic"):
        paginator = clients.sns.get_paginator("list_subscriptions_by_topic")
        return tuple(
            Listed(sub.get("Protocol", ""), sub.get("SubscriptionArn", ""), sub.get("Endpoint", ""))
            for page in paginator.paginate(TopicArn=target.topic_arn)
            for sub in page.get("Subscriptions", [])
        )


def subscriptions(clients: Clients, listed: tuple[Listed, ...], wanted: frozenset[str]) -> dict[str, Subscription]:
    """The confirmed SQS subscriptions to the `wanted` queue ARNs, by queue ARN: attributes only for those."""
    chosen = sorted(
        (s.arn, s.endpoint)
        for s in listed
        if s.protocol == "sqs" and s.arn.startswith("arn:") and s.endpoint in wanted  # pending ones have no ARN
    )
    return {endpoint: _subscription(clients, arn, endpoint) for arn, endpoint in chosen}


def _subscription(clients: Clients, arn: str, queue_arn: str) -> Subscription:
    """One subscription's delivery settings; a failed read is kept as unknown, not as 'none'."""
    try:
        attributes = clients.sns.get_subscription_attributes(SubscriptionArn=arn).get("Attributes", {})
    except (ClientError, BotoCoreError) as exc:
        return Subscription(arn, queue_arn, None, "", unread=f"sns:GetSubscriptionAttributes failed ({_reason(exc)})")
    return Subscription(
        arn=arn,
        queue_arn=queue_arn,
        raw_delivery=attributes.get("RawMessageDelivery", "false").lower() == "true",
        dlq_arn=dlq_arn_of(attributes.get("RedrivePolicy", "")),
    )
