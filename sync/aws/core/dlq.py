"""A message parked in a subscription DLQ, unwrapped from its SNS envelope (pure)."""

from __future__ import annotations

import json
from dataclasses import dataclass


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
