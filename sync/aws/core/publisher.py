"""What a publisher logged about an SNS message id, and the log patterns that find it (pure)."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sync.definitions.model import PublisherLog

PATTERN_LIMIT = 1024  # FilterLogEvents filterPattern maximum length


@dataclass(frozen=True)
class Published:
    """What the publisher logged about one SNS message."""

    message_id: str
    business_key: str
    log_group: str
    logged: datetime | None


def field_value(doc: dict[str, Any], path: str) -> str:
    """A dotted field from a JSON object, as text; '' when absent."""
    value: object = doc
    for part in path.split("."):
        if not isinstance(value, dict) or part not in value:
            return ""
        value = value[part]
    if value is None or isinstance(value, dict | list):
        return "" if value is None else json.dumps(value, sort_keys=True)
    return str(value)


def parse_publisher_line(message: str, publisher: PublisherLog) -> tuple[str, str] | None:
    """(SNS message id, business key) from one publisher log line that carries JSON, else None."""
    start = message.find("{")
    if start < 0:
        return None
    try:
        doc = json.loads(message[start:])
    except ValueError:
        return None
    if not isinstance(doc, dict):
        return None
    message_id = field_value(doc, publisher.message_id_field)
    if not message_id:
        return None
    key = field_value(doc, publisher.business_key_field) if publisher.business_key_field else ""
    return message_id, key


def id_batches(timed: Sequence[tuple[datetime, str]], limit: int = PATTERN_LIMIT) -> list[list[tuple[datetime, str]]]:
    """Time-ordered message ids grouped so each OR pattern of quoted terms fits the pattern limit."""
    batches: list[list[tuple[datetime, str]]] = []
    size = 0
    for stamp, ident in timed:
        term = len(ident) + 4  # ?"...", plus a separating space
        if not batches or size + term > limit:
            batches.append([])
            size = 0
        batches[-1].append((stamp, ident))
        size += term
    return batches


def or_pattern(ids: Iterable[str]) -> str:
    return " ".join(f'?"{ident}"' for ident in ids)
