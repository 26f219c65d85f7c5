"""Pure: one composite metric x one placed queue -> the composite monitor's API request body.

Its query combines the queue's other monitors by ID. Those IDs exist only once the monitors do, so the
body holds `${monitor_id:<key>}` placeholders, which the plan and the sync fill in (composites are written
after monitors, see sync.core.kinds.COMPOSITE).
"""

from __future__ import annotations

from typing import Any

from sync.core import composite_query
from sync.core.keys import Key
from sync.core.kinds import COMPOSITE
from sync.core.placeholders import placeholder
from sync.core.resources import Resource
from sync.definitions import tokens
from sync.definitions.model import Environment, Metric
from sync.expand.monitor import message, monitor_tags, pages, token_values
from sync.expand.naming import PlacedQueue
from sync.expand.settings import Settings

# Settings a composite cannot use: its state comes from the monitors it combines.
_MONITOR_ONLY = ("query", "thresholds", "threshold_basis", "notify_no_data", "timeout_h")


def composite(
    env: Environment,
    placed: PlacedQueue,
    metric: Metric,
    settings: Settings,
    key: str,
    links: tuple[str, ...],
    drain_note: str = "",
) -> Resource:
    """`key` is env/queue/metric; the monitors it combines are env/queue/<their metric>."""
    queue = placed.queue
    for name in _MONITOR_ONLY:
        layer = settings.origin.get(name)
        # Settings for every monitor of an environment or queue are fine; ones for this metric are a mistake.
        if layer is not None and (layer.source is metric.source or layer.at[-2:-1] == ("metrics",)):
            raise settings.error(
                name,
                key,
                f"'{metric.name}' is a composite: {name} does not apply to it",
                f"set {name} on the metrics it combines instead",
            )
    assert metric.composite is not None  # only composite metrics come here
    parent = Key.of(key).parent
    assert parent is not None  # env/queue/metric
    query = composite_query.substitute(
        metric.composite, composite_query.METRIC, lambda name: placeholder("monitor", str(parent.child(name)))
    )
    values = token_values(env, placed, None, {})
    options: dict[str, Any] = {"notify_audit": False, "include_tags": True, "notify_no_data": False}
    if settings["renotify_interval"] and pages(settings, env):
        options["renotify_interval"] = settings["renotify_interval"]
    body = {
        "name": f"[{env.name}] {queue.name}: {tokens.fill(metric.title, values).strip()}",
        "type": "composite",
        "query": " ".join(query.split()),
        "message": message(env, placed, settings, values, key, False, links, drain_note),
        "tags": monitor_tags(env, queue, metric, key),
        "priority": settings["priority"],
        "options": options,
    }
    return Resource(kind=COMPOSITE, key=key, body=body, env=env.name, queue=queue.name)
