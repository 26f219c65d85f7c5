"""Peek at subscription DLQs without consuming them, and index their messages by SNS message id."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from botocore.exceptions import ClientError

from sync.aws.core.dlq import DlqMessage, Peek, parse_dlq_message
from sync.aws.core.events import arn_account, arn_region, queue_name_of
from sync.aws.core.redrive import Redrive
from sync.aws.reads.clients import NONEXISTENT_QUEUE, Clients, aws_errors, error_code
from sync.errors import ObsError

if TYPE_CHECKING:
    from mypy_boto3_sqs import SQSClient
    from mypy_boto3_sqs.type_defs import ChangeMessageVisibilityBatchRequestEntryTypeDef

_BATCH = 10
_EMPTY_POLLS = 3  # short polls can come back empty while messages remain


def peek(clients: Clients, dlq_arn: str, limit: int, hold_s: int = 30) -> Peek:
    """Up to `limit` messages, each hidden for `hold_s` while reading and then made visible again."""
    dlq, sqs = queue_name_of(dlq_arn), clients.in_region(arn_region(dlq_arn)).sqs
    with aws_errors(f"find DLQ {dlq}", "sqs:GetQueueUrl"):
        try:
            url = sqs.get_queue_url(QueueName=dlq, QueueOwnerAWSAccountId=arn_account(dlq_arn))["QueueUrl"]
        except ClientError as exc:
            if error_code(exc) not in NONEXISTENT_QUEUE:
                raise
            return Peek(dlq, (), note=f"DLQ {dlq} does not exist")
    with aws_errors(f"read DLQ {dlq}", "sqs:GetQueueAttributes"):
        attributes = sqs.get_queue_attributes(
            QueueUrl=url, AttributeNames=["ApproximateNumberOfMessages", "RedrivePolicy"]
        ).get("Attributes", {})
    if attributes.get("RedrivePolicy"):  # receives count towards maxReceiveCount: a peek could move them
        return Peek(dlq, (), note=f"DLQ {dlq} has its own redrive policy; not peeked so nothing is moved")
    expected = min(limit, int(attributes.get("ApproximateNumberOfMessages", "0") or 0))
    found: dict[str, DlqMessage] = {}
    handles: list[str] = []
    empty = 0
    calls = 3 * (expected // _BATCH + 1) + _EMPTY_POLLS  # bounded even if held messages come round again
    stuck: list[str] = []
    with aws_errors(f"peek at DLQ {dlq}", "sqs:ReceiveMessage and sqs:ChangeMessageVisibility"):
        try:
            while len(found) < expected and empty < _EMPTY_POLLS and calls > 0:
                calls -= 1
                got = sqs.receive_message(
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
            stuck = _release(sqs, url, handles)
    notes = []
    if len(found) < expected:
        notes.append(f"DLQ {dlq}: read {len(found)} of about {expected} messages")
        if dlq.endswith(".fifo"):
            notes.append(
                f"DLQ {dlq} is FIFO: SQS hands out no more of a message group while some of it is held, "
                f"so a peek sees about {_BATCH} messages per group"
            )
    if stuck:
        notes.append(
            f"DLQ {dlq}: {len(stuck)} peeked messages could not be made visible again "
            f"({', '.join(sorted(set(stuck)))}); they reappear by themselves within {hold_s} s"
        )
    return Peek(dlq, tuple(sorted(found.values(), key=lambda m: (m.sns_message_id, m.body))), "; ".join(notes))


def _release(sqs: SQSClient, url: str, handles: list[str]) -> list[str]:
    """Make every peeked message visible again at once; the error codes of entries SQS refused."""
    refused: list[str] = []
    for start in range(0, len(handles), _BATCH):
        entries: list[ChangeMessageVisibilityBatchRequestEntryTypeDef] = [
            {"Id": str(i), "ReceiptHandle": handle, "VisibilityTimeout": 0}
            for i, handle in enumerate(handles[start : start + _BATCH])
        ]
        answer = sqs.change_message_visibility_batch(QueueUrl=url, Entries=entries)
        refused += [str(entry.get("Code", "unknown error")) for entry in answer.get("Failed", [])]
    return refused


def peek_dlqs(clients: Clients, dlqs: Mapping[str, Redrive], limit: int, notes: list[str]) -> dict[str, DlqMessage]:
    """SNS message id -> its copy in a DLQ, from every known DLQ; a DLQ that cannot be read becomes a note."""
    parked: dict[str, DlqMessage] = {}
    for dlq_arn in sorted({r.dlq_arn for r in dlqs.values() if r.dlq_arn}):
        try:
            seen = peek(clients, dlq_arn, limit)
        except ObsError as exc:
            notes.append(f"DLQ {queue_name_of(dlq_arn)} not peeked: {exc}")
            continue
        if seen.note:
            notes.append(seen.note)
        unmatched = 0
        for message in seen.messages:
            if message.sns_message_id:
                parked.setdefault(message.sns_message_id, message)
            else:
                unmatched += 1
        if unmatched:
            notes.append(f"DLQ {seen.dlq}: {unmatched} raw-delivery messages carry no SNS message id to match")
    return parked
