"""Peek at a subscription DLQ without consuming it, and match its messages to failures."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING

from botocore.exceptions import ClientError

from ..errors import ObsError
from .aws import Clients, aws_errors, error_code

if TYPE_CHECKING:
    from mypy_boto3_sqs.type_defs import ChangeMessageVisibilityBatchRequestEntryTypeDef

_BATCH = 10
_EMPTY_POLLS = 3  # short polls can come back empty while messages remain


@dataclass(frozen=True)
class DlqMessage:
    """One message parked in a subscription DLQ."""

    dlq: str
    sns_message_id: str  # "" with raw delivery: only the body survives
    body: str  # the published message (unwrapped from the SNS envelope when there is one)
    group_id: str
    deduplication_id: str


@dataclass(frozen=True)
class Peek:
    dlq: str
    messages: tuple[DlqMessage, ...]
    note: str = ""


def parse_dlq_message(dlq: str, body: str, attributes: dict[str, str]) -> DlqMessage:
    """The SNS id and published body from an envelope; the raw body when raw delivery was on."""
    sns_id, message = "", body
    try:
        doc = json.loads(body)
    except ValueError:
        doc = None
    if isinstance(doc, dict) and doc.get("Type") == "Notification" and isinstance(doc.get("MessageId"), str):
        sns_id = doc["MessageId"]
        message = doc.get("Message", "") if isinstance(doc.get("Message"), str) else json.dumps(doc.get("Message"))
    return DlqMessage(
        dlq=dlq,
        sns_message_id=sns_id,
        body=message,
        group_id=attributes.get("MessageGroupId", ""),
        deduplication_id=attributes.get("MessageDeduplicationId", ""),
    )


def peek(clients: Clients, dlq: str, account_id: str, limit: int, hold_s: int = 30) -> Peek:
    """Up to `limit` messages, each hidden for `hold_s` while reading and then made visible again."""
    try:
        with aws_errors(f"find DLQ {dlq}", "sqs:GetQueueUrl"):
            url = clients.sqs.get_queue_url(QueueName=dlq, QueueOwnerAWSAccountId=account_id)["QueueUrl"]
    except ObsError as exc:
        cause = exc.__cause__
        if isinstance(cause, ClientError) and error_code(cause) in {
            "AWS.SimpleQueueService.NonExistentQueue",
            "QueueDoesNotExist",
        }:
            return Peek(dlq, (), note=f"DLQ {dlq} does not exist")
        raise
    with aws_errors(f"read DLQ {dlq}", "sqs:GetQueueAttributes"):
        attributes = clients.sqs.get_queue_attributes(
            QueueUrl=url, AttributeNames=["ApproximateNumberOfMessages", "RedrivePolicy"]
        ).get("Attributes", {})
    if attributes.get("RedrivePolicy"):  # receives count towards maxReceiveCount: a peek could move them
        return Peek(dlq, (), note=f"DLQ {dlq} has its own redrive policy; not peeked so nothing is moved")
    expected = min(limit, int(attributes.get("ApproximateNumberOfMessages", "0") or 0))
    found: dict[str, DlqMessage] = {}
    handles: list[str] = []
    empty = 0
    calls = 3 * (expected // _BATCH + 1) + _EMPTY_POLLS  # bounded even if held messages come round again
    with aws_errors(f"peek at DLQ {dlq}", "sqs:ReceiveMessage and sqs:ChangeMessageVisibility"):
        try:
            while len(found) < expected and empty < _EMPTY_POLLS and calls > 0:
                calls -= 1
                got = clients.sqs.receive_message(
                    QueueUrl=url,
                    MaxNumberOfMessages=_BATCH,
                    VisibilityTimeout=hold_s,
                    WaitTimeSeconds=0,
                    MessageSystemAttributeNames=["All"],
                    MessageAttributeNames=["All"],
                ).get("Messages", [])
                empty = 0 if got else empty + 1
                for message in got:
                    handles.append(message["ReceiptHandle"])
                    found[message["MessageId"]] = parse_dlq_message(
                        dlq,
                        message.get("Body", ""),
                        {str(k): v for k, v in message.get("Attributes", {}).items()},
                    )
        finally:
            _release(clients, url, handles)
    note = "" if len(found) >= expected else f"DLQ {dlq}: read {len(found)} of about {expected} messages"
    return Peek(dlq, tuple(sorted(found.values(), key=lambda m: (m.sns_message_id, m.body))), note)


def _release(clients: Clients, url: str, handles: list[str]) -> None:
    """Make every peeked message visible again at once, so the peek leaves the queue as it was."""
    for start in range(0, len(handles), _BATCH):
        entries: list[ChangeMessageVisibilityBatchRequestEntryTypeDef] = [
            {"Id": str(i), "ReceiptHandle": handle, "VisibilityTimeout": 0}
            for i, handle in enumerate(handles[start : start + _BATCH])
        ]
        clients.sqs.change_message_visibility_batch(QueueUrl=url, Entries=entries)
