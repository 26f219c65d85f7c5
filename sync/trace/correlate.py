"""Say what each failed message was, from the publisher's own log of the SNS message ids it got back."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from sync.definitions.model import PublisherLog
from sync.trace.aws import Clients
from sync.trace.failures import Failure
from sync.trace.logs import Progress, filter_events

PATTERN_LIMIT = 1024  # FilterLogEvents filterPattern maximum length
_MISSING = "fix publisher_log.log_group of the queue in queues.yaml"
_AROUND = timedelta(minutes=5)  # publishers log just before or after Publish returns


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


def lookup_published(
    clients: Clients,
    publishers: Sequence[PublisherLog],
    failures: Sequence[Failure],
    progress: Progress | None = None,
) -> dict[str, Published]:
    """Publisher records for the failed message ids, searched near each message's publish time."""
    timed: list[tuple[datetime, str]] = sorted(
        {(stamp, f.message_id) for f in failures if (stamp := f.published or f.logged) is not None}
    )
    wanted = {ident for _, ident in timed}
    found: dict[str, Published] = {}
    for publisher in publishers:
        for batch in id_batches(timed):
            start, end = batch[0][0] - _AROUND, batch[-1][0] + _AROUND
            pattern = or_pattern(ident for _, ident in batch)
            events = filter_events(
                clients, publisher.log_group, start, end, pattern=pattern, progress=progress, missing=_MISSING
            )
            for message, millis in events:
                parsed = parse_publisher_line(message, publisher)
                if parsed is None or parsed[0] not in wanted or parsed[0] in found:
                    continue
                logged = datetime.fromtimestamp(millis / 1000, tz=UTC) if millis is not None else None
                found[parsed[0]] = Published(parsed[0], parsed[1], publisher.log_group, logged)
    return found
