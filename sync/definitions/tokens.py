"""The [[token]] template syntax: it collides neither with Datadog's {{var}} messages nor its $var queries."""

from __future__ import annotations

import re
from collections.abc import Mapping
from functools import lru_cache
from typing import Any

TOKEN = re.compile(r"\[\[\s*([^\[\]]*?)\s*\]\]")

# Tokens a naming pattern may use.
NAMING = frozenset({"env", "name"})

# Tokens a monitor query, message or title may use, with the queue feature each one needs.
MONITOR: Mapping[str, str | None] = {
    "env": None,
    "queue": None,
    "class": None,
    "owner": None,
    "runbook": None,
    "queue_name": None,
    "region": None,
    "account_id": None,
    "aws_scope": None,
    "retention_seconds": None,
    "in_flight_quota": None,
    "stall_minutes": None,
    "sqs_count_scale": None,  # an environment's fact, not a queue's: see FACTS
    "critical": None,
    "warning": None,
    "slo_seconds": "slo",
    "silence_minutes": "traffic",
    "dlq_name": "dlq",
    "max_receive_count": "dlq",
    "dlq_retention_seconds": "dlq",
    "cluster": "worker",
    "service": "worker",
    "min_tasks": "worker",
    "max_tasks": "worker",
    "topic": "topics",
    "topic_name": "topics",
    "topic_queues": "topics",
    "subscription_dlq_name": "topics",
}

# Tokens whose value is a fact an environment declares, with the fact: a metric using one makes monitors only in
# environments that declare it. sqs_count_scale turns a sum of SQS counter points into messages (1 or 60).
FACTS: Mapping[str, str] = {"sqs_count_scale": "sqs_counters"}

# Tokens a dashboard template may use; list- and object-valued ones only as a whole string.
DASHBOARD = frozenset(
    {"env", "region", "account_id", "site", "queue_names", "dlq_names", "service_names", "topic_names"}
    | {"slo_markers", "slo_widgets", "runbooks", "maintenance", "muted_monitors"}
)


def tokens_in(text: str) -> list[str]:
    return list(_pieces(text)[1::2])


def unknown_tokens(text: str, allowed: Mapping[str, Any] | frozenset[str]) -> list[str]:
    return [name for name in tokens_in(text) if name not in allowed]


def fill(text: str, values: Mapping[str, object]) -> str:
    """Replace every token with its value; callers have checked the names at load time."""
    pieces = _pieces(text)
    if len(pieces) == 1:
        return text
    filled = list(pieces)
    for index in range(1, len(filled), 2):
        filled[index] = _text(values[filled[index]])
    return "".join(filled)


@lru_cache(maxsize=8192)  # a fleet fills the same few templates tens of thousands of times
def _pieces(text: str) -> tuple[str, ...]:
    """Text between tokens at even places, token names at odd places."""
    return tuple(TOKEN.split(text))


def fill_value(value: Any, values: Mapping[str, object]) -> Any:
    """Fill tokens through a JSON-like tree; a string that is exactly one token becomes that value."""
    if isinstance(value, str):
        whole = TOKEN.fullmatch(value)
        return values[whole.group(1)] if whole else fill(value, values)
    if isinstance(value, list):
        return [fill_value(item, values) for item in value]
    if isinstance(value, dict):
        return {key: fill_value(item, values) for key, item in value.items()}
    return value


def _text(value: object) -> str:
    if isinstance(value, float):
        # Plain decimals: a query takes 0.00005, not 5e-05.
        return str(int(value)) if value.is_integer() else f"{value:.6f}".rstrip("0")
    return str(value)
