"""What was read of the live configuration, as plain data: queues, keys, subscriptions, logging (pure)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field

AWS_MANAGED_SQS_KEY = "alias/aws/sqs"


@dataclass(frozen=True)
class KeyFacts:
    key: str  # as the queue names it: id, ARN or alias
    manager: str = ""  # AWS or CUSTOMER
    state: str = ""  # Enabled, Disabled, PendingDeletion, NotFound, or "" when unread
    policy: str = ""
    unread: str = ""  # why something could not be read
    usage: str = ""  # KeyUsage, e.g. ENCRYPT_DECRYPT
    spec: str = ""  # KeySpec, e.g. SYMMETRIC_DEFAULT
    code: str = ""  # the AWS error code of a failed read


@dataclass(frozen=True)
class QueueFacts:
    queue: str
    exists: bool | None  # None when the read failed or cannot tell
    policy: str = ""
    key: KeyFacts | None = None
    unread: str = ""
    attributes: Mapping[str, str] = field(default_factory=dict)  # every attribute GetQueueAttributes gave
    code: str = ""  # the AWS error code of a failed read


@dataclass(frozen=True)
class Subscription:
    arn: str
    queue_arn: str
    raw_delivery: bool | None  # None when the attributes could not be read
    dlq_arn: str  # from the RedrivePolicy, "" when none (or unread)
    unread: str = ""  # why the attributes could not be read


def key_from(key: str, metadata: Mapping[str, object], policy: str = "") -> KeyFacts:
    """KeyFacts from a DescribeKey KeyMetadata (and a GetKeyPolicy Policy), as the queue names the key."""
    return KeyFacts(
        key=key,
        manager=str(metadata.get("KeyManager", "")),
        state=str(metadata.get("KeyState", "")),
        usage=str(metadata.get("KeyUsage", "")),
        spec=str(metadata.get("KeySpec", "")),
        policy=policy,
    )


@dataclass(frozen=True)
class Listed:
    """One subscription as ListSubscriptionsByTopic shows it."""

    protocol: str
    arn: str  # "PendingConfirmation" until confirmed
    endpoint: str  # never printed: an HTTP(S) endpoint may carry credentials


@dataclass(frozen=True)
class LoggingStatus:
    """Whether SNS writes failed SQS deliveries to CloudWatch Logs for this topic."""

    failure_role: str  # SQSFailureFeedbackRoleArn, "" when unset
    success_role: str
    success_sample_rate: str
    failure_group_exists: bool


def dlq_arn_of(redrive: str) -> str:
    """The dead-letter queue a subscription's RedrivePolicy names; "" when none or unparseable."""
    try:
        doc = json.loads(redrive) if redrive else {}
    except ValueError:
        return ""
    return str(doc.get("deadLetterTargetArn", "")) if isinstance(doc, dict) else ""
