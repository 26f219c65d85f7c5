"""Classify a failed delivery into a plain-language cause with its fix (pure)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from sync.aws.core.events import Delivery


@dataclass(frozen=True)
class Cause:
    """Why a delivery failed, what it means, and how to fix it."""

    key: str
    title: str
    explain: str
    fix: str
    retried: bool  # False: SNS gave up at once (client-side error)


QUEUE_POLICY = "queue-policy"
KMS_ACCESS = "kms-access"
KMS_DISABLED = "kms-disabled"
KMS_NOT_FOUND = "kms-not-found"
KMS_THROTTLED = "kms-throttled"
KMS_KEY_USAGE = "kms-key-usage"
KMS_GONE_OR_DENIED = "kms-gone-or-denied"
QUEUE_DELETED = "queue-deleted"
DATA_PROTECTION = "data-protection"
TOO_MANY_ATTRIBUTES = "too-many-attributes"
SQS_THROTTLED = "sqs-throttled"
UNKNOWN = "unknown"

# <sns-principal> is sns.amazonaws.com, or sns.<region>.amazonaws.com for a topic in an opt-in region
_POLICY_STATEMENT = (
    '{"Effect":"Allow","Principal":{"Service":"<sns-principal>"},"Action":"sqs:SendMessage",'
    '"Resource":"<queue-arn>","Condition":{"ArnEquals":{"aws:SourceArn":"<topic-arn>"}}}'
)

CAUSES: dict[str, Cause] = {
    c.key: c
    for c in (
        Cause(
            QUEUE_POLICY,
            "Queue policy denies the topic",
            "The queue's access policy does not let this topic send to it (no sqs:SendMessage for "
            "<sns-principal>, or an aws:SourceArn condition naming another topic). SNS does not retry.",
            f"Add to the queue policy: {_POLICY_STATEMENT}.",
            retried=False,
        ),
        Cause(
            KMS_ACCESS,
            "KMS key unusable by SNS",
            "The queue is encrypted with a KMS key SNS may not use: the AWS-managed key alias/aws/sqs "
            "(its policy cannot be changed) or a customer key whose policy does not allow <sns-principal>. "
            "SNS does not retry.",
            "Encrypt the queue with a customer-managed key whose key policy allows Principal "
            '{"Service":"<sns-principal>"} kms:GenerateDataKey* and kms:Decrypt, or use SSE-SQS '
            "(SqsManagedSseEnabled) instead of alias/aws/sqs.",
            retried=False,
        ),
        Cause(
            KMS_GONE_OR_DENIED,
            "KMS key missing or unusable by SNS",
            "KMS answered that the queue's key does not exist or that SNS is not allowed to use it: the two "
            "look the same in the log, so either the key was deleted (or the queue names a wrong key) or its "
            "policy does not allow <sns-principal>. The live check below tells which. SNS does not retry.",
            "If the key is gone, point the queue's KmsMasterKeyId at an existing customer-managed key; if it "
            'exists, let its key policy allow Principal {"Service":"<sns-principal>"} kms:GenerateDataKey* and '
            "kms:Decrypt.",
            retried=False,
        ),
        Cause(
            KMS_KEY_USAGE,
            "KMS key of the wrong kind",
            "The queue's KMS key cannot encrypt data keys: it is an asymmetric or HMAC key, or its key usage "
            "is not ENCRYPT_DECRYPT. SQS needs a symmetric encryption key. SNS does not retry.",
            "Point the queue's KmsMasterKeyId at a symmetric (SYMMETRIC_DEFAULT, ENCRYPT_DECRYPT) "
            "customer-managed key that allows <sns-principal>.",
            retried=False,
        ),
        Cause(
            KMS_DISABLED,
            "KMS key disabled",
            "The queue's KMS key is disabled or pending deletion, so nothing can be encrypted for the queue.",
            "Enable the key (aws kms enable-key --key-id <key>), or cancel its deletion, or move the queue "
            "to an enabled customer-managed key.",
            retried=False,
        ),
        Cause(
            KMS_NOT_FOUND,
            "KMS key not found",
            "The queue names a KMS key that no longer exists (deleted, or a wrong key id or alias).",
            "Point the queue's KmsMasterKeyId at an existing customer-managed key that allows SNS.",
            retried=False,
        ),
        Cause(
            KMS_THROTTLED,
            "KMS throttled",
            "KMS throttled the data-key requests for the queue; SNS retried and then gave up.",
            "Raise KmsDataKeyReusePeriodSeconds on the queue (fewer KMS calls) or request a higher KMS "
            "request quota, then republish the messages.",
            retried=True,
        ),
        Cause(
            QUEUE_DELETED,
            "Queue deleted",
            "The subscription points at a queue that does not exist any more. SNS does not retry.",
            "Recreate the queue with the same name (and its policy), or remove the stale subscription; "
            "republish the lost messages.",
            retried=False,
        ),
        Cause(
            DATA_PROTECTION,
            "Topic data-protection policy",
            "The topic's data-protection policy blocked the message from leaving for this subscription "
            "(sensitive data found by an outbound Deny statement).",
            "Remove the sensitive data from the message at the publisher, or change the Outbound statement "
            "of the topic's data-protection policy (aws sns get-data-protection-policy).",
            retried=False,
        ),
        Cause(
            TOO_MANY_ATTRIBUTES,
            "Too many message attributes",
            "SQS accepts at most 10 message attributes; with raw message delivery the SNS attributes are "
            "copied onto the SQS message, so the message was rejected.",
            "Publish at most 10 message attributes (fold the rest into the body), or turn off raw message "
            "delivery on the subscription so the attributes travel inside the envelope.",
            retried=False,
        ),
        Cause(
            SQS_THROTTLED,
            "SQS throttled or unavailable",
            "SQS refused the delivery with a throttling or server error; SNS retried and then gave up.",
            "Check the queue's quotas and the AWS Health dashboard, then republish the messages.",
            retried=True,
        ),
        Cause(
            UNKNOWN,
            "Unknown cause",
            "The failure does not match a known cause; the provider response is shown raw.",
            "Read the raw provider response below; check the queue policy, the queue's KMS key and the "
            "subscription attributes.",
            retried=False,
        ),
    )
}

RANK = {key: index for index, key in enumerate(CAUSES)}  # report order: the usual suspects first

_TOO_MANY_ATTRIBUTES = re.compile(r"number of message attributes.*exceeds", re.IGNORECASE)
_GONE_OR_DENIED = re.compile(r"does not exist.*not allowed to access", re.IGNORECASE)


def classify(delivery: Delivery) -> Cause:
    """The cause of a failed delivery, decided by error code first, then by the message text."""
    return CAUSES[cause_key(delivery.response.error_code, delivery.response.error_message, delivery)]


def cause_key(code: str, message: str, delivery: Delivery | None = None) -> str:
    folded = re.sub(r"[^a-z]", "", code.lower())
    text = f"{message} {delivery.response.raw if delivery else ''}".lower()
    if "kms" in folded:
        return _kms_cause(folded, text)
    if "nonexistentqueue" in folded or "queuedoesnotexist" in folded:
        return QUEUE_DELETED
    if folded in {"accessdenied", "accessdeniedexception"}:
        return QUEUE_POLICY
    if _TOO_MANY_ATTRIBUTES.search(text):
        return TOO_MANY_ATTRIBUTES
    # AWS.SimpleQueueService.InternalError and friends: server-side, so SNS retried before giving up
    if "throttl" in folded or folded.endswith(("serviceunavailable", "internalerror", "internalfailure")):
        return SQS_THROTTLED
    if not code and "data protection policy" in text:
        return DATA_PROTECTION
    return UNKNOWN


def _kms_cause(folded: str, text: str) -> str:
    if "accessdenied" in folded:
        # KMS says "does not exist ... or you are not allowed to access" for a deleted key too
        return KMS_GONE_OR_DENIED if _GONE_OR_DENIED.search(text) else KMS_ACCESS
    if "invalidkeyusage" in folded:
        return KMS_KEY_USAGE
    if "disabled" in folded or "invalidstate" in folded:
        return KMS_DISABLED
    if "notfound" in folded:
        return KMS_NOT_FOUND
    if "throttl" in folded:
        return KMS_THROTTLED
    return UNKNOWN
