"""Pure: definitions x environment -> the desired Datadog monitors and dashboards, as API request bodies."""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from typing import Any

from . import tokens
from .definitions import DashboardTemplate, Definitions, Environment, Metric, Queue
from .errors import ObsError
from .naming import PlacedQueue, PlacedTopic, placed_queues
from .references import QUERY_TAIL, base_features, class_features
from .resources import DASHBOARD, KEY_TAG_PREFIX, MANAGED_TAG, MONITOR, Resource, dashboard_marker, sort_key
from .settings import Settings, settings_for
from .source import KeyPath, Source

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


def expand(defs: Definitions, env_name: str) -> tuple[Resource, ...]:
    """Every monitor and dashboard the environment should have, sorted by kind then key."""
    env = defs.environment(env_name)
    placed = placed_queues(defs, env_name)
    for queue in placed:
        _check_overrides(defs, env, queue.queue)
    feeds: dict[str, list[str]] = {}  # topic -> the queues it feeds here
    for queue in placed:
        for topic in queue.topics:
            feeds.setdefault(topic.sns_name, []).append(queue.sqs_name)
    monitors = [m for q in placed for metric in defs.metrics for m in _monitors(defs, env, q, metric, feeds)]
    dashboards = [_dashboard(env, placed, t) for t in defs.dashboards if env.dashboards.get(t.name, True)]
    resources = sorted([*monitors, *dashboards], key=sort_key)
    for before, after in itertools.pairwise(resources):
        if (before.kind, before.key) == (after.kind, after.key):
            raise ObsError.of(f"two {after.kind}s would share the key {after.key}", "give them distinct names")
    return tuple(resources)


def expand_all(defs: Definitions) -> dict[str, tuple[Resource, ...]]:
    return {env.name: expand(defs, env.name) for env in defs.environments}


# The queue attribute behind each feature a metric may need.
_FEATURE_FIELD = {"slo": "slo_seconds", "worker": "worker", "dlq": "dlq", "topics": "topics"}


def applies(defs: Definitions, metric: Metric, queue: Queue) -> bool:
    """A metric applies to a queue of a listed class that has every feature the metric's templates need.
    What only the class's own settings need is a contract of the class: a queue lacking it is an error."""
    if metric.classes is not None and queue.cls not in metric.classes:
        return False
    if not all(queue.has(feature) for feature in base_features(metric)):
        return False
    for feature in sorted(class_features(metric, queue.cls)):
        if not queue.has(feature):
            field = _FEATURE_FIELD[feature]
            raise defs.inventory.error(
                ("queues", defs.queue_index[queue.name]),
                f"queue '{queue.name}' has no {field}, which metric '{metric.name}' needs for {queue.cls} queues",
                f"add {field} to the queue, or change its class",
            )
    return True


def _check_overrides(defs: Definitions, env: Environment, queue: Queue) -> None:
    """Settings for a metric that does not apply to the queue would be silently ignored: refuse them."""
    index = defs.queue_index[queue.name]
    places: list[tuple[Source, KeyPath, Mapping[str, Any]]] = [
        (defs.inventory, ("queues", index, "metrics"), queue.metrics),
        (env.source, ("queues", queue.name, "metrics"), env.queues.get(queue.name, {}).get("metrics", {})),
    ]
    metrics = {m.name: m for m in defs.metrics}
    for source, at, overrides in places:
        for name in overrides:
            if not applies(defs, metrics[name], queue):
                raise source.error(
                    (*at, name),
                    f"metric '{name}' does not apply to queue '{queue.name}' ({queue.cls}), so this has no effect",
                    f"remove it, or make monitors/{name}.yaml apply to the queue",
                )


def _monitors(
    defs: Definitions, env: Environment, placed: PlacedQueue, metric: Metric, feeds: Mapping[str, list[str]]
) -> list[Resource]:
    queue = placed.queue
    if not applies(defs, metric, queue):
        return []
    settings = settings_for(defs, env, queue, metric)
    if not settings["enabled"]:
        return []
    base_key = f"{env.name}/{queue.name}/{metric.name}"
    if metric.for_each == "topic":
        # A topic's metric is the topic's: one monitor, kept by the first of the queues it feeds (by name).
        mine = [t for t in placed.topics if min(feeds[t.sns_name]) == placed.sqs_name]
        return [_monitor(env, placed, metric, settings, f"{base_key}/{t.name}", (t, feeds[t.sns_name])) for t in mine]
    return [_monitor(env, placed, metric, settings, base_key, None)]


def _monitor(
    env: Environment,
    placed: PlacedQueue,
    metric: Metric,
    settings: Settings,
    key: str,
    topic: tuple[PlacedTopic, list[str]] | None,
) -> Resource:
    queue = placed.queue
    thresholds = _thresholds(settings, queue, key)
    values = _token_values(env, placed, topic, thresholds)
    query = _fill(settings, "query", values, key)
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
    if settings["renotify_interval"]:
        options["renotify_interval"] = settings["renotify_interval"]
    tags = {
        MANAGED_TAG,
        f"{KEY_TAG_PREFIX}{key}",
        f"env:{env.name}",
        f"queue:{queue.name}",
        f"metric:{metric.name}",
        f"queue-class:{queue.cls}",
        f"team:{queue.owner}",
        *env.tags,
        *queue.tags,
    }
    body = {
        "name": f"[{env.name}] {queue.name}: {title}",
        "type": "query alert",
        "query": query,
        "message": _message(env, placed, settings, values, key, options["notify_no_data"]),
        "tags": sorted(tags),
        "priority": settings["priority"],
        "options": options,
    }
    return Resource(kind=MONITOR, key=key, body=body, env=env.name, queue=queue.name)


def _notify_no_data(settings: Settings, queue: Queue) -> bool:
    # An SQS queue nobody polls goes quiet after six idle hours, so silence is news only with workers always on.
    always_polled = queue.worker is not None and queue.worker.min_tasks > 0
    return bool(settings["notify_no_data"]) and always_polled


def _thresholds(settings: Settings, queue: Queue, key: str) -> dict[str, float | int]:
    raw = settings["thresholds"]
    basis_name = settings.get("threshold_basis")
    scale: float = 1
    if basis_name:
        basis = {
            "slo_seconds": queue.slo_seconds,
            "retention_seconds": queue.retention_seconds,
            "in_flight_quota": queue.in_flight_quota,
            "max_tasks": queue.worker.max_tasks if queue.worker else None,
        }[basis_name]
        if basis is None:
            raise settings.error(
                "threshold_basis",
                key,
                f"thresholds are relative to {basis_name}, which queue '{queue.name}' does not have",
                f"set {basis_name} on the queue, or use absolute thresholds for it",
            )
        scale = basis
    return {name: _number(value * scale) for name, value in sorted(raw.items()) if value is not None}


def _number(value: float) -> float | int:
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


def _token_values(
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
        "retention_seconds": queue.retention_seconds,
        "in_flight_quota": queue.in_flight_quota,
        "critical": thresholds["critical"],
        "warning": thresholds.get("warning", "none"),
    }
    if queue.slo_seconds is not None:
        values["slo_seconds"] = queue.slo_seconds
    if queue.dlq and placed.dlq_sqs_name:
        values.update(dlq_name=placed.dlq_sqs_name, max_receive_count=queue.dlq.max_receive_count)
    if queue.worker:
        values.update(
            cluster=placed.cluster,
            service=placed.service,
            min_tasks=queue.worker.min_tasks,
            max_tasks=queue.worker.max_tasks,
        )
    if topic:
        values.update(topic=topic[0].name, topic_name=topic[0].sns_name, topic_queues=", ".join(sorted(topic[1])))
    return values


def _fill(settings: Settings, field: str, values: Mapping[str, object], key: str) -> str:
    missing = [t for t in tokens.tokens_in(settings[field]) if t not in values]
    if missing:
        raise settings.error(
            field,
            key,
            f"[[{missing[0]}]] names something queue '{values['queue']}' does not have",
            "remove the token from this override, or add what it names to the queue",
        )
    return tokens.fill(settings[field], values).strip()


def _message(
    env: Environment,
    placed: PlacedQueue,
    settings: Settings,
    values: Mapping[str, object],
    key: str,
    no_data: bool,
) -> str:
    queue = placed.queue
    lines = [
        _fill(settings, "message", values, key),
        "",
        f"Queue `{queue.name}` ({queue.cls}) in {env.name}, owned by {queue.owner}.",
        f"Runbook: {queue.runbook}",
    ]
    notify = settings["notify"]
    handles = []
    for severity, condition in _ROUTES if no_data else _ROUTES[:-1]:
        audience = notify.get(severity, "none")
        who = " ".join(env.notify.get(audience, ())) if audience != "none" else ""
        if who:
            handles.append(f"{{{{#{condition}}}}}{who}{{{{/{condition}}}}}")
    if handles:
        lines += ["", *handles]
    return "\n".join(lines)


def _dashboard(env: Environment, placed: tuple[PlacedQueue, ...], template: DashboardTemplate) -> Resource:
    key = f"{env.name}/{template.name}"
    body = {k: v for k, v in template.body.items() if k not in ("name", "$schema")}
    body = tokens.fill_value(body, _dashboard_values(env, placed))
    body.setdefault("layout_type", "ordered")
    description = str(body.get("description", "")).strip()
    body["description"] = "\n\n".join(p for p in (description, dashboard_marker(key)) if p)
    for index, variable in enumerate(body.get("template_variables", [])):
        # The API refuses both forms at once, and an empty default (seen in recorded exchanges).
        if "default" in variable and "defaults" in variable:
            raise template.source.error(
                ("template_variables", index), "both default and defaults are set", "keep defaults, a list"
            )
        if "" in variable.get("defaults", []):
            raise template.source.error(
                ("template_variables", index, "defaults"), f"an empty default in {env.name}", "remove it, or use *"
            )
    return Resource(kind=DASHBOARD, key=key, body=body, env=env.name)


def _dashboard_values(env: Environment, placed: tuple[PlacedQueue, ...]) -> dict[str, object]:
    def names(of: list[str]) -> list[str]:
        return sorted(set(of))

    markers = [
        {"label": f"{q.name} SLO", "value": f"y = {q.queue.slo_seconds}", "display_type": "error dashed"}
        for q in placed
        if q.queue.slo_seconds is not None
    ]
    runbooks = "\n".join(f"- **{q.name}** ({q.sqs_name}): [runbook]({q.queue.runbook})" for q in placed)
    return {
        "env": env.name,
        "region": env.region,
        "account_id": env.account_id,
        "site": env.site,
        "queue_names": names([q.sqs_name for q in placed]),
        "dlq_names": names([q.dlq_sqs_name for q in placed if q.dlq_sqs_name]),
        "service_names": names([q.service for q in placed if q.service]),
        "topic_names": names([t.sns_name for q in placed for t in q.topics]),
        "slo_markers": markers,
        "runbooks": runbooks,
    }
