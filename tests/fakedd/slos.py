"""Service level objectives as Datadog keeps them (v1 /api/v1/slo): string ids, answers wrapped in `data`
(a create's and an update's as a list of one), the fields the server fills in, and the list's filters."""

from __future__ import annotations

import copy
import secrets
from typing import Any

from datadog_api_client.v1.model.service_level_objective import ServiceLevelObjective
from datadog_api_client.v1.model.service_level_objective_request import ServiceLevelObjectiveRequest

from .common import Body, Query, Rejected, integer, now, param
from .validate import check

CREATOR = {"email": "fake@example.com", "handle": "fake@example.com", "name": None}
MAX_LIMIT = 1000
_TYPE_IDS = {"monitor": 0, "metric": 1, "time_slice": 2}  # SLOTypeNumeric
_READ_ONLY = ("id", "created_at", "modified_at", "creator", "type_id", "monitor_tags", "configured_alert_ids")


def not_found(slo_id: str) -> Rejected:
    return Rejected(404, f"SLO {slo_id} not found")  # wording unverified


class Slos:
    def __init__(self) -> None:
        self.items: dict[str, Body] = {}

    def create(self, body: Body) -> Body:
        check(body, ServiceLevelObjectiveRequest, read_only=False)
        moment = int(now().timestamp())
        slo_id = secrets.token_hex(16)  # 32 hex digits, as the API's ids are
        server = {"id": slo_id, "created_at": moment, "creator": dict(CREATOR)}
        self.items[slo_id] = _rewrite(body, server, moment)
        return {"data": [copy.deepcopy(self.items[slo_id])], "errors": []}

    def update(self, slo_id: str, body: Body) -> Body:
        current = self.get(slo_id)
        check({k: v for k, v in body.items() if k not in _READ_ONLY}, ServiceLevelObjective, read_only=True)
        if body.get("type", current["type"]) != current["type"]:
            raise Rejected(400, "The SLO type cannot be changed.")  # Terraform forces a new SLO; wording unverified
        # A full replace: only the server's own fields survive from the old SLO.
        self.items[slo_id] = _rewrite(body, current, int(now().timestamp()))
        return {"data": [copy.deepcopy(self.items[slo_id])], "errors": []}

    def delete(self, slo_id: str, referenced_by: list[str], force: bool) -> Body:
        self.get(slo_id)
        if referenced_by and not force:
            # The API answers 409 with the SLODeleteResponse shape (spec); the wording is unverified.
            raise Rejected(409, f"{slo_id}: SLO is referenced by {', '.join(referenced_by)}")
        del self.items[slo_id]
        return {"data": [slo_id], "errors": {}}

    def get(self, slo_id: str) -> Body:
        if slo_id not in self.items:
            raise not_found(slo_id)
        return self.items[slo_id]

    def listing(self, query: Query) -> Body:
        found = [s for _, s in sorted(self.items.items(), key=lambda item: (item[1]["created_at"], item[0]))]
        if param(query, "is_deleted") == "true":
            found = []  # deletion here is final
        if ids := param(query, "ids"):
            wanted = {i.strip() for i in ids.split(",")}
            found = [s for s in found if s["id"] in wanted]
        if name := param(query, "query"):
            found = [s for s in found if name.lower() in s["name"].lower()]
        if tag := param(query, "tags_query"):  # a single tag
            found = [s for s in found if tag.strip() in s["tags"]]
        if metrics := param(query, "metrics_query"):
            found = [s for s in found if metrics in str(s.get("query") or "")]
        limit = integer(query, "limit")
        offset = integer(query, "offset") or 0
        if limit is not None and not 0 < limit <= MAX_LIMIT:
            raise Rejected(400, f"limit must be between 1 and {MAX_LIMIT}")  # wording unverified
        page = found[offset : offset + (limit or MAX_LIMIT)]
        return {"data": copy.deepcopy(page), "errors": [], "metadata": {"page": {"total_count": len(self.items)}}}


def _rewrite(body: Body, kept: Body, modified: int) -> Body:
    """The stored form of a checked body, raising Rejected for what the API refuses; kept holds server fields."""
    stored_thresholds = _thresholds(body.get("thresholds") or [])
    slo_type = body["type"]
    spec = _checked_spec(body, copy.deepcopy(body.get("sli_specification")))
    primary = stored_thresholds[0]
    slo: Body = {
        "id": kept["id"],
        "name": body["name"].strip(),
        "description": body.get("description"),  # null when left out
        "tags": list(body.get("tags") or []),
        "type": slo_type,
        "type_id": _TYPE_IDS[slo_type],
        "thresholds": stored_thresholds,
        "timeframe": body.get("timeframe", primary["timeframe"]),
        "target_threshold": float(body.get("target_threshold") or primary["target"]),
        "monitor_ids": list(body.get("monitor_ids") or []),
        "monitor_tags": [],
        "created_at": kept["created_at"],
        "modified_at": modified,
        "creator": kept["creator"],
    }
    if spec is not None:
        slo["sli_specification"] = spec
    if body.get("query") is not None:
        slo["query"] = body["query"]
    if "groups" in body:
        slo["groups"] = body["groups"]
    warning_threshold = body.get("warning_threshold", primary.get("warning"))
    if warning_threshold is not None:
        slo["warning_threshold"] = float(warning_threshold)
    return slo


def _thresholds(thresholds: list[Body]) -> list[Body]:
    """The thresholds as stored: one per timeframe, numbers as floats with a display string."""
    if not thresholds:
        raise Rejected(400, "thresholds: at least one is required")  # wording unverified
    timeframes = [t["timeframe"] for t in thresholds]
    if "custom" in timeframes or len(set(timeframes)) != len(timeframes):
        raise Rejected(400, "thresholds: one per timeframe, of 7d, 30d or 90d")
    stored_thresholds = []
    for threshold in thresholds:
        target = float(threshold["target"])
        if not 0 < target < 100:
            raise Rejected(400, f"Invalid target {threshold['target']}: it must be between 0 and 100")
        warning = threshold.get("warning")
        if warning is not None and not target < float(warning) < 100:
            raise Rejected(400, "The warning threshold must be greater than the target and below 100")
        # Numbers come back as floats, with a display string of the precision sent.
        stored: Body = {"timeframe": threshold["timeframe"], "target": target, "target_display": _display(target)}
        if warning is not None:
            stored |= {"warning": float(warning), "warning_display": _display(float(warning))}
        stored_thresholds.append(stored)
    return stored_thresholds


def _checked_spec(body: Body, spec: Any) -> Any:
    """The SLI specification as stored (a time slice gets its default interval), refused when the type needs
    what the body lacks."""
    slo_type = body["type"]
    if slo_type == "time_slice":
        condition = (spec or {}).get("time_slice")
        if condition is None:
            raise Rejected(400, "sli_specification.time_slice is required for a time_slice SLO")
        condition.setdefault("query_interval_seconds", 300)  # the spec's default
        condition["threshold"] = float(condition["threshold"])
        names = {q["name"] for q in condition["query"]["queries"]}
        if not names:
            raise Rejected(400, "sli_specification.time_slice.query.queries: at least one query is required")
    elif slo_type == "monitor" and not body.get("monitor_ids"):
        raise Rejected(400, "monitor_ids is required for a monitor SLO")
    elif slo_type == "metric" and not (body.get("query") or spec):
        raise Rejected(400, "query is required for a metric SLO")
    return spec


def _display(value: float) -> str:
    return f"{value:.1f}" if value == int(value) else f"{value:g}"
