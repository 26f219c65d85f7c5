"""Pure: a queue with slo_seconds -> its time-slice SLO and the burn-rate monitors that alert on it.

The SLO counts the minutes whose oldest message waited at most slo_seconds. A static age threshold pages
on every burst that autoscaling absorbs; a burn rate pages only when the error budget drains fast, and
posts to chat when it drains slowly.
"""

from __future__ import annotations

from typing import Any

from sync.core import placeholders
from sync.core.kinds import MONITOR, SLO
from sync.core.resources import Resource
from sync.definitions.model import Environment
from sync.definitions.slo import Burn, SloSettings
from sync.expand.naming import PlacedQueue

METRIC = "aws.sqs.approximate_age_of_oldest_message"
_BURN_TITLES = {"fast_burn": "error budget burning fast", "slow_burn": "error budget burning slowly"}
# Severity -> Datadog message conditions that notify the burn's audience: the alert and its recovery.
_ROUTES = ("is_alert", "is_recovery")


def slo_key(env: str, queue: str) -> str:
    return f"{env}/{queue}/slo"


def resources(env: Environment, placed: PlacedQueue, settings: SloSettings, links: tuple[str, ...]) -> list[Resource]:
    """The queue's SLO and its burn-rate monitors; nothing for a queue without slo_seconds."""
    queue = placed.queue
    if queue.slo_seconds is None or not settings.enabled:
        return []
    key = slo_key(env.name, queue.name)
    tags = sorted(
        {
            *env.ownership.tags(key),
            f"env:{env.name}",
            f"queue:{queue.name}",
            f"queue-class:{queue.cls}",
            f"team:{queue.owner}",
            *env.tags,
            *queue.tags,
        }
    )
    slo = Resource(SLO, key, _slo_body(env, placed, settings, tags), env.name, queue.name)
    return [slo, *(_burn_monitor(env, placed, settings, burn, links) for burn in settings.burns)]


def title(env: Environment, placed: PlacedQueue) -> str:
    return f"[{env.name}] {placed.queue.name}: jobs start within {placed.queue.slo_seconds} s"


def _slo_body(env: Environment, placed: PlacedQueue, settings: SloSettings, tags: list[str]) -> dict[str, Any]:
    queue = placed.queue
    thresholds = [_threshold(timeframe, settings) for timeframe in settings.timeframes]
    body: dict[str, Any] = {
        "name": title(env, placed),
        "type": "time_slice",
        "description": (
            f"Share of {settings.slice_seconds // 60}-minute slices in which the oldest message in {placed.sqs_name}"
            f" had waited at most {queue.slo_seconds} s. Queue `{queue.name}` ({queue.cls}), owned by {queue.owner}."
            f" Runbook: {queue.runbook}"
        ),
        "sli_specification": {
            "time_slice": {
                "comparator": "<=",
                "threshold": queue.slo_seconds,
                "query_interval_seconds": settings.slice_seconds,
                "query": {
                    "formulas": [{"formula": "age"}],
                    "queries": [
                        {
                            "data_source": "metrics",
                            "name": "age",
                            "query": f"max:{METRIC}{{queuename:{placed.sqs_name},{env.aws_scope}}}",
                        }
                    ],
                },
            }
        },
        "thresholds": thresholds,
        # The primary timeframe's values, which the server would otherwise fill in from the first threshold.
        "timeframe": settings.timeframes[0],
        "target_threshold": settings.target,
        "tags": tags,
    }
    if settings.warning is not None:
        body["warning_threshold"] = settings.warning
    return body


def _threshold(timeframe: str, settings: SloSettings) -> dict[str, Any]:
    found: dict[str, Any] = {"timeframe": timeframe, "target": settings.target}
    if settings.warning is not None:
        found["warning"] = settings.warning
    return found


def _burn_monitor(
    env: Environment, placed: PlacedQueue, settings: SloSettings, burn: Burn, links: tuple[str, ...]
) -> Resource:
    queue = placed.queue
    name = burn.name.replace("_", "-")
    key = f"{env.name}/{queue.name}/slo-{name}"
    slo_id = placeholders.placeholder(SLO.name, slo_key(env.name, queue.name))
    timeframe = settings.timeframes[0]
    threshold = _number(burn.threshold)
    query = (
        f'burn_rate("{slo_id}").over("{timeframe}")'
        f'.long_window("{burn.long_window}").short_window("{burn.short_window}") > {threshold}'
    )
    lines = [
        f"Queue {placed.sqs_name} is spending its error budget {threshold} times as fast as a {settings.target:g}%"
        f" target over {timeframe} allows (oldest message within {queue.slo_seconds} s), over both the last"
        f" {burn.long_window} and the last {burn.short_window}.",
        "Jobs are starting late often enough to break the SLO: workers are too few, stuck, or failing.",
        "",
        f"Queue `{queue.name}` ({queue.cls}) in {env.name}, owned by {queue.owner}.",
        *links,
    ]
    who = " ".join(env.notify.get(burn.audience, ())) if burn.audience != "none" else ""
    if who:
        lines += ["", *(f"{{{{#{condition}}}}}{who}{{{{/{condition}}}}}" for condition in _ROUTES)]
    tags = {
        *env.ownership.tags(key),
        f"env:{env.name}",
        f"queue:{queue.name}",
        f"metric:slo-{name}",
        f"queue-class:{queue.cls}",
        f"team:{queue.owner}",
        *env.tags,
        *queue.tags,
    }
    options: dict[str, Any] = {
        "thresholds": {"critical": threshold},
        "notify_audit": False,
        "include_tags": True,
        "notify_no_data": False,
    }
    body = {
        "name": f"[{env.name}] {queue.name}: {_BURN_TITLES[burn.name]}",
        "type": "slo alert",
        "query": query,
        "message": "\n".join(lines),
        "tags": sorted(tags),
        "priority": burn.priority,
        "options": options,
    }
    # No renotify_interval, whatever the environment's monitors set: a burn rate trails its fault (the short
    # window still holds bad minutes 25-40 minutes after the queue is healthy again), so an hourly reminder
    # of a page lands, in an incident of about an hour, after the age monitor has told chat the queue
    # recovered and the responder has resolved the incident: a new page for a fault that is over.
    return Resource(MONITOR, key, body, env.name, queue.name)


def _number(value: float) -> float | int:
    return int(value) if float(value).is_integer() else value
