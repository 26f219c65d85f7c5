"""Pure: a dashboard template x environment -> the dashboard's API request body."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sync.core import placeholders
from sync.core.kinds import DASHBOARD, SLO
from sync.core.resources import Resource
from sync.definitions import tokens
from sync.definitions.model import DashboardTemplate, Environment
from sync.definitions.slo import SloSettings
from sync.expand import maintenance, slo, urls
from sync.expand.naming import PlacedQueue


def dashboard(
    env: Environment,
    placed: tuple[PlacedQueue, ...],
    template: DashboardTemplate,
    slos: Mapping[str, SloSettings] | None = None,
) -> Resource:
    """`slos`: the settings of each queue that has an SLO here, for the `[[slo_widgets]]` token."""
    key = f"{env.name}/{template.name}"
    body = {k: v for k, v in template.body.items() if k not in ("name", "$schema")}
    body = tokens.fill_value(
        body, {**_dashboard_values(env, placed), "slo_widgets": _slo_widgets(env, placed, slos or {})}
    )
    body.setdefault("layout_type", "ordered")
    description = str(body.get("description", "")).strip()
    body["description"] = "\n\n".join(p for p in (description, env.ownership.line(key)) if p)
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
    runbooks = "\n".join(
        f"- **{q.name}** ({q.sqs_name}): [runbook]({q.queue.runbook})"
        f" · [monitors]({urls.queue_monitors(env.site, env.name, q.name)})"
        f" · [SQS]({urls.sqs_queue(env.region, env.account_id, q.sqs_name)})"
        for q in placed
    )
    return {
        "env": env.name,
        "region": env.region,
        "account_id": env.account_id,
        "site": env.site,
        "queue_names": names([q.sqs_name for q in placed]),
        "dlq_names": names(
            [q.dlq_sqs_name for q in placed if q.dlq_sqs_name]
            + [t.subscription_dlq for q in placed for t in q.topics if t.subscription_dlq]
        ),
        "service_names": names([q.service for q in placed if q.service]),
        "topic_names": names([t.sns_name for q in placed for t in q.topics]),
        "slo_markers": markers,
        "runbooks": runbooks,
        "maintenance": maintenance.listing(env),
        # The monitor manager's search: what a downtime (planned or ad-hoc) mutes in this environment now.
        "muted_monitors": f'tag:"env:{env.name}" muted:true',
    }


def _slo_widgets(env: Environment, placed: tuple[PlacedQueue, ...], slos: Mapping[str, SloSettings]) -> list[Any]:
    """One SLO widget per queue SLO: its status and remaining error budget over each of its timeframes. The
    SLO's ID is a placeholder until it exists (SLOs are written before dashboards)."""
    return [
        {
            "definition": {
                "type": "slo",
                "title": slo.title(env, q),
                "slo_id": placeholders.placeholder(SLO.name, slo.slo_key(env.name, q.name)),
                "view_type": "detail",
                "view_mode": "overall",
                "show_error_budget": True,
                "time_windows": list(slos[q.name].timeframes),
            }
        }
        for q in placed
        if q.name in slos
    ]
