"""Pure: one metric x one placed queue (or topic) -> the monitor's API request body."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from sync.core.kinds import MONITOR
from sync.core.resources import Resource
from sync.core.retention import dlq_life
from sync.definitions import tokens
from sync.definitions.model import Environment, Metric, Queue
from sync.definitions.source import MAX_NUMBER
from sync.definitions.templates import QUERY_TAIL
from sync.expand.naming import PlacedQueue, PlacedTopic
from sync.expand.settings import Settings

# Severity -> Datadog message conditions that notify its audience.
_ROUTES = (
    ("alert", "is_alert"),
    ("alert", "is_recovery"),  # any recovery, so an incident opened by an alert resolves even via warning
    ("warning", "is_warning"),
    ("warning", "is_warning_recovery"),
    ("no_data", "is_no_data"),
)

# Below the critical threshold means healthy for > and >=; above it for < and <=.
_RISING = (">", ">=")
# What a sum of SQS counter points is multiplied by to give messages, per environment's aws.sqs_counters: a
# per-second value is a minute's count / 60, and .as_count() does not undo that on a gauge.
SQS_COUNT_SCALE = {"counts": 1, "per_second": 60}


def monitor(
    env: Environment,
    placed: PlacedQueue,
    metric: Metric,
    settings: Settings,
    key: str,
    topic: tuple[PlacedTopic, list[str]] | None,
    links: tuple[str, ...],
    drain_note: str = "",
) -> Resource:
    """`links` end the message: where the person on call looks (oncall.message_lines). `drain_note` names the
    maintenance windows that mute the monitor (maintenance.drain_note)."""
    queue = placed.queue
    thresholds = _thresholds(settings, queue, key)
    values = token_values(env, placed, topic, thresholds)
    query = fill(settings, "query", values, key)
    comparator = QUERY_TAIL.search(settings["query"])
    assert comparator is not None  # checked when the definitions were loaded
    _check_order(settings, thresholds, comparator.group(1), key)
    title = tokens.fill(metric.title, values).strip()
    options: dict[str, Any] = {
        "thresholds": thresholds,
        "evaluation_delay": settings["evaluation_delay"],
        "require_full_window": settings["require_full_window"],
        "notify_audit": False,
        "include_tags": True,
        "notify_no_data": _notify_no_data(settings, queue),
    }
    if options["notify_no_data"]:
        options["no_data_timeframe"] = settings["no_data_timeframe"]
    if settings["renotify_interval"] and pages(settings, env):
        options["renotify_interval"] = settings["renotify_interval"]
    if settings.get("timeout_h"):
        options["timeout_h"] = settings["timeout_h"]
    tags = monitor_tags(env, queue, metric, key)
    body = {
        "name": f"[{env.name}] {queue.name}: {title}",
        "type": "query alert",
        "query": query,
        "message": message(env, placed, settings, values, key, options["notify_no_data"], links, drain_note),
        "tags": tags,
        "priority": settings["priority"],
        "options": options,
    }
    return Resource(kind=MONITOR, key=key, body=body, env=env.name, queue=queue.name)


def monitor_tags(env: Environment, queue: Queue, metric: Metric, key: str) -> list[str]:
    """Our ownership marker and what people filter monitors by."""
    tags = {
        *env.ownership.tags(key),
        f"env:{env.name}",
        f"queue:{queue.name}",
        f"metric:{metric.name}",
        f"queue-class:{queue.cls}",
        f"team:{queue.owner}",
        *env.tags,
        *queue.tags,
    }
    return sorted(tags)


def pages(settings: Settings, env: Environment) -> bool:
    """Whether an alert reaches one of the environment's renotify audiences (by default `page`, the people on
    call): renotifying a chat channel every hour about a condition that lasts days is noise."""
    audience = settings["notify"].get("alert", "none")
    return audience in env.renotify_audiences and bool(env.notify.get(audience))


def _notify_no_data(settings: Settings, queue: Queue) -> bool:
    # An SQS queue nobody polls goes quiet after six idle hours, so silence is news only with workers always on.
    always_polled = queue.worker is not None and queue.worker.min_tasks > 0
    return bool(settings["notify_no_data"]) and always_polled


def _thresholds(settings: Settings, queue: Queue, key: str) -> dict[str, float | int]:
    raw = settings["thresholds"]
    if raw.get("critical") is None:  # left out, or removed by a later layer with null
        raise settings.error(
            "thresholds",
            key,
            "there is no critical threshold",
            "set thresholds.critical: the query's threshold comes from it",
        )
    basis_name = settings.get("threshold_basis")
    scale: float = 1
    if basis_name:
        basis = {
            "slo_seconds": queue.slo_seconds,
            "retention_seconds": queue.retention_seconds,
            "in_flight_quota": queue.in_flight_quota,
            "max_tasks": queue.worker.max_tasks if queue.worker else None,
            "dlq_retention_seconds": queue.dlq.retention_seconds if queue.dlq else None,
            "dlq_life_seconds": (
                dlq_life(queue.retention_seconds, queue.dlq.retention_seconds, queue.fifo) if queue.dlq else None
            ),
        }[basis_name]
        if basis is None:
            raise settings.error(
                "threshold_basis",
                key,
                f"thresholds are relative to {basis_name}, which queue '{queue.name}' does not have",
                f"set {basis_name} on the queue, or use absolute thresholds for it",
            )
        scale = basis
    out = {name: _number(value * scale) for name, value in sorted(raw.items()) if value is not None}
    for name, value in out.items():
        if not math.isfinite(value) or abs(value) > MAX_NUMBER:  # e.g. a huge fraction of a large basis
            raise settings.error(
                "thresholds",
                key,
                f"the {name} threshold works out to {value:.6g}"
                + (f" ({raw[name]} x {basis_name} {scale})" if basis_name else "")
                + f", beyond the {MAX_NUMBER:,} a Datadog threshold can hold exactly",
                "use a smaller threshold" + (f" or {basis_name}" if basis_name else ""),
            )
    return out


def _number(value: float) -> float | int:
    if not math.isfinite(value):
        return value  # refused by the caller, with where it came from
    rounded = round(value, 6)
    return int(rounded) if float(rounded).is_integer() else rounded


def _check_order(settings: Settings, thresholds: Mapping[str, float | int], comparator: str, key: str) -> None:
    """Warning and recovery values must sit on the healthy side of what they qualify, as Datadog requires."""
    rising = comparator in _RISING
    pairs = (("warning", "critical"), ("critical_recovery", "critical"), ("warning_recovery", "warning"))
    for lower, upper in pairs:
        if lower in thresholds and upper in thresholds:
            a, b = thresholds[lower], thresholds[upper]
            if (a >= b) if rising else (a <= b):
                side = "below" if rising else "above"
                raise settings.error(
                    "thresholds",
                    key,
                    f"{lower} threshold {a} must be {side} {upper} {b} for a '{comparator}' query",
                    "swap or correct the values",
                )


def stall_minutes(max_processing_seconds: int | None) -> int:
    """A window that always holds a delete while the workers are healthy: one and a half of the longest job, so
    that jobs started together and deleted together never leave it empty; fifteen minutes at least."""
    return max(15, math.ceil(1.5 * (max_processing_seconds or 0) / 60))


def token_values(
    env: Environment,
    placed: PlacedQueue,
    topic: tuple[PlacedTopic, list[str]] | None,
    thresholds: Mapping[str, float | int],
) -> dict[str, object]:
    queue = placed.queue
    values: dict[str, object] = {
        "env": env.name,
        "queue": queue.name,
        "class": queue.cls,
        "owner": queue.owner,
        "runbook": queue.runbook,
        "queue_name": placed.sqs_name,
        "region": env.region,
        "account_id": env.account_id,
        "aws_scope": env.aws_scope,
        "retention_seconds": queue.retention_seconds,
        "in_flight_quota": queue.in_flight_quota,
        "stall_minutes": stall_minutes(queue.max_processing_seconds),
    }
    if env.sqs_counters is not None:
        values["sqs_count_scale"] = SQS_COUNT_SCALE[env.sqs_counters]
    if "critical" in thresholds:  # a composite has none: its state comes from the monitors it combines
        values.update(critical=thresholds["critical"], warning=thresholds.get("warning", "none"))
    if queue.slo_seconds is not None:
        values["slo_seconds"] = queue.slo_seconds
    if queue.silence_minutes is not None:
        values["silence_minutes"] = queue.silence_minutes
    if queue.dlq and placed.dlq_sqs_name:
        values.update(
            dlq_name=placed.dlq_sqs_name,
            max_receive_count=queue.dlq.max_receive_count,
            dlq_retention_seconds=queue.dlq.retention_seconds,
        )
    if queue.worker:
        values.update(
            cluster=placed.cluster,
            service=placed.service,
            min_tasks=queue.worker.min_tasks,
            max_tasks=queue.worker.max_tasks,
        )
    if topic:
        placed_topic, fed = topic
        values.update(topic=placed_topic.name, topic_name=placed_topic.sns_name, topic_queues=", ".join(sorted(fed)))
        if placed_topic.subscription_dlq:
            values["subscription_dlq_name"] = placed_topic.subscription_dlq
    return values


def fill(settings: Settings, field: str, values: Mapping[str, object], key: str) -> str:
    missing = [t for t in tokens.tokens_in(settings[field]) if t not in values]
    if missing:
        raise settings.error(
            field,
            key,
            f"[[{missing[0]}]] names something queue '{values['queue']}' does not have",
            "remove the token from this override, or add what it names to the queue",
        )
    return tokens.fill(settings[field], values).strip()


def message(
    env: Environment,
    placed: PlacedQueue,
    settings: Settings,
    values: Mapping[str, object],
    key: str,
    no_data: bool,
    links: tuple[str, ...],
    drain_note: str,
) -> str:
    queue = placed.queue
    lines = [
        fill(settings, "message", values, key),
        *([drain_note] if drain_note else []),
        "",
        f"Queue `{queue.name}` ({queue.cls}) in {env.name}, owned by {queue.owner}.",
        *links,
    ]
    notify = settings["notify"]
    handles = []
    for severity, condition in _ROUTES if no_data else _ROUTES[:-1]:
        audience = notify.get(severity, "none")
        who = " ".join(env.notify.get(audience, ())) if audience != "none" else ""
        if who and condition == "is_warning" and audience == notify.get("alert"):
            # The step down from an alert to a warning is no news to the audience the alert already reached: to
            # a pager it would be a new trigger, a second call for an incident that is getting better.
            who = f"{{{{^is_alert_to_warning}}}}{who}{{{{/is_alert_to_warning}}}}"
        if who:
            handles.append(f"{{{{#{condition}}}}}{who}{{{{/{condition}}}}}")
    if handles:
        lines += ["", *handles]
    return "\n".join(lines)
