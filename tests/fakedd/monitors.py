"""Monitors as Datadog keeps them: its rewrites of a create or update, its checks, and its list filters."""

from __future__ import annotations

import copy
import re
from datetime import datetime

from datadog_api_client.v1.model.monitor import Monitor
from datadog_api_client.v1.model.monitor_update_request import MonitorUpdateRequest

from .common import Body, Query, Rejected, integer, now, param, timestamp
from .validate import check

NOT_FOUND = "Monitor not found"
CREATOR = {"email": "fake@example.com", "handle": "fake@example.com", "id": 1, "name": None}
ORG_ID = 1
FIRST_ID = 10_000_001
MAX_PAGE_SIZE = 1000

_QUERY_TAIL = re.compile(r"(<=|>=|==|!=|<|>)\s*(-?\d+(?:\.\d+)?)$")
# Types whose query must end in "<operator> <number>" (the recorded 400 is a log alert without one).
_THRESHOLD_TYPES = {"metric alert", "query alert", "log alert"}
# Types that get groupby_simple_monitor: false (recorded here for log alert; the rest as the recorded creates in
# the test cassettes of DataDog/datadog-api-client-python and DataDog/terraform-provider-datadog show them).
_LOG_LIKE = {"log alert", "rum alert", "ci-pipelines alert", "ci-tests alert", "error-tracking alert"}
_GROUP_STATES = {"all", "alert", "warn", "no data"}
# A composite's query: monitor IDs joined by && and ||, negated with !, grouped with parentheses.
_COMPOSITE_ID = re.compile(r"\d+")
_COMPOSITE_SHAPE = re.compile(r"^[\d\s()!&|]+$")
_COMPOSITE_MOST = 10  # "up to 10 individual monitors"


class Monitors:
    def __init__(self) -> None:
        self.items: dict[int, Body] = {}
        self._next_id = FIRST_ID

    def create(self, body: Body) -> Body:
        check(body, Monitor, read_only=False)
        self._check_composite(body)
        moment = now()
        created = {"created": timestamp(moment), "created_at": int(moment.timestamp()) * 1000}
        monitor = _rewrite(body, created, moment)
        monitor = {"id": self._next_id, "org_id": ORG_ID, **monitor, "creator": dict(CREATOR)}
        self._next_id += 1
        self.items[monitor["id"]] = monitor
        # The create and update answers carry restriction_policy; a GET of the same monitor does not (recorded).
        return {**copy.deepcopy(monitor), "restriction_policy": None}

    def update(self, monitor_id: int, body: Body) -> Body:
        current = self.get(monitor_id)
        check(body, MonitorUpdateRequest, read_only=False)
        _same_type(current, body)
        sent = {k: v for k, v in body.items() if k != "options"}
        # Top-level fields left out are kept; options, when sent, replace the old ones wholesale (recorded).
        options = (body.get("options") or {}) if "options" in body else current["options"]
        self._check_composite({**current, **sent})
        monitor = {**current, **_rewrite({**current, **sent, "options": options}, current, now(), creating=False)}
        self.items[monitor_id] = monitor
        answer = {k: v for k, v in copy.deepcopy(monitor).items() if k != "creator"}  # recorded: no creator
        return {**answer, "restriction_policy": None}

    def delete(self, monitor_id: int, force: bool = False) -> Body:
        self.get(monitor_id)
        users = [m["id"] for m in self.items.values() if monitor_id in _referenced(m)]
        if users and not force:
            # The API refuses to delete a monitor a composite uses, unless forced (wording unverified).
            raise Rejected(400, f"monitor [{monitor_id},] is referenced in composite monitors: {users}")
        del self.items[monitor_id]
        return {"deleted_monitor_id": monitor_id}

    def validate(self, body: Body, monitor_id: int | None = None) -> Body:
        check(body, Monitor, read_only=False)
        self._check_composite(body)
        if monitor_id is not None:
            _same_type(self.get(monitor_id), body)
        _rewrite(body, {}, now())
        return {}

    def _check_composite(self, body: Body) -> None:
        """A composite must name existing monitors that are not composites themselves (wording unverified)."""
        if body.get("type") != "composite":
            return
        query = str(body.get("query", ""))
        if not _COMPOSITE_SHAPE.match(query):
            raise Rejected(400, "The value provided for parameter 'query' is invalid")
        ids = {int(found) for found in _COMPOSITE_ID.findall(query)}
        if not ids or len(ids) > _COMPOSITE_MOST:
            raise Rejected(400, f"Composite monitors can reference between 1 and {_COMPOSITE_MOST} monitors")
        missing = sorted(i for i in ids if i not in self.items)
        if missing:
            raise Rejected(400, f"Composite query refers to monitors that do not exist: {missing}")
        nested = sorted(i for i in ids if self.items[i]["type"] == "composite")
        if nested:
            raise Rejected(400, f"Composite monitors cannot reference other composite monitors: {nested}")

    def get(self, monitor_id: int) -> Body:
        if monitor_id not in self.items:
            raise Rejected(404, NOT_FOUND)
        return self.items[monitor_id]

    def listing(self, query: Query) -> list[Body]:
        states = param(query, "group_states")
        if states and not {s.strip() for s in states.split(",")} <= _GROUP_STATES:
            raise Rejected(400, "Invalid group_state filters.")
        found = [m for _, m in sorted(self.items.items())]
        if wanted := param(query, "monitor_tags"):
            tags = {t.strip().lower() for t in wanted.split(",") if t.strip()}
            found = [m for m in found if tags <= set(m["tags"])]
        if scope := param(query, "tags"):
            found = [m for m in found if all(t.strip() in m["query"] for t in scope.split(",") if t.strip())]
        if name := param(query, "name"):
            found = [m for m in found if name.lower() in m.get("name", "").lower()]
        if (offset := integer(query, "id_offset")) is not None:
            found = [m for m in found if m["id"] > offset]
        page = integer(query, "page")
        size = integer(query, "page_size")
        if size is not None and not 0 < size <= MAX_PAGE_SIZE:
            raise Rejected(400, f"page_size must be between 1 and {MAX_PAGE_SIZE}")  # wording unverified
        if page is not None:
            size = size or 100
            found = found[page * size : (page + 1) * size]
        return [{**copy.deepcopy(m), "matching_downtimes": []} for m in found]


def _referenced(monitor: Body) -> set[int]:
    if monitor["type"] != "composite":
        return set()
    return {int(found) for found in _COMPOSITE_ID.findall(monitor["query"])}


def _rewrite(body: Body, kept: Body, moment: datetime, creating: bool = True) -> Body:
    """The stored form of a checked body, raising Rejected for what the API refuses; kept holds server fields."""
    query = body["query"].strip()
    options = _options(body.get("options") or {}, body["type"], creating)
    _check_query(body["type"], query, options)
    priority = body.get("priority")
    monitor: Body = {
        "type": _stored_type(body["type"], options),
        **{k: body[k].strip() for k in ("name", "message") if isinstance(body.get(k), str)},
        "tags": [t.lower() for t in body.get("tags") or []],
        "query": query,
        "options": options,
        "multi": " by {" in query or ".by(" in query,  # the recorded log monitor grouped with .by("source") is multi
        "created_at": kept.get("created_at"),
        "created": kept.get("created"),
        "modified": timestamp(moment),
        "deleted": None,
        "restricted_roles": body.get("restricted_roles"),
        "priority": priority or None,  # 0 came back null (recorded)
        **{k: body[k] for k in ("draft_status",) if k in body},
        "assets": [],
        "overall_state_modified": None,
        "overall_state": "No Data",
    }
    return monitor


def _options(sent: Body, monitor_type: str, creating: bool) -> Body:
    options = copy.deepcopy(sent)
    if isinstance(options.get("escalation_message"), str):
        options["escalation_message"] = options["escalation_message"].strip()
    if isinstance(options.get("thresholds"), dict):
        # Numbers come back as floats; a threshold sent as null is removed; an empty set is dropped (recorded).
        thresholds = {k: float(v) for k, v in options["thresholds"].items() if v is not None}
        options["thresholds"] = thresholds
        if not thresholds:
            del options["thresholds"]
    defaults: Body = {"notify_audit": False, "notify_no_data": False, "include_tags": True, "silenced": {}}
    if creating:
        defaults["new_host_delay"] = 300  # an update that leaves it out keeps it out (recorded)
    if monitor_type in _LOG_LIKE:
        defaults["groupby_simple_monitor"] = False
    return {**options, **{k: v for k, v in defaults.items() if k not in options}}


def _check_query(monitor_type: str, query: str, options: Body) -> None:
    if "\n" in query:
        raise Rejected(400, "The value provided for parameter 'query' is invalid")
    tail = _QUERY_TAIL.search(query)
    if monitor_type in _THRESHOLD_TYPES and not tail:
        raise Rejected(400, "The value provided for parameter 'query' is invalid: invalid operator specified: ")
    thresholds = options.get("thresholds") or {}
    if "warning" in thresholds and "critical" not in thresholds:
        raise Rejected(400, "Alert status is required.")
    if tail and "critical" in thresholds and float(tail.group(2)) != thresholds["critical"]:
        critical, in_query = thresholds["critical"], float(tail.group(2))
        raise Rejected(400, f"Alert threshold ({critical}) does not match that used in the query ({in_query}).")


def _stored_type(sent: str, options: Body) -> str:
    # Classic metric queries are kept as "query alert", formula ones ("variables") as "metric alert" (recorded).
    if sent in ("metric alert", "query alert"):
        return "metric alert" if options.get("variables") else "query alert"
    return sent


def _same_type(current: Body, body: Body) -> None:
    if "type" not in body:
        return
    wanted = _stored_type(body["type"], body.get("options") or current["options"])
    if wanted != current["type"]:
        # The API refuses this (Terraform forces a new monitor); the wording here is unverified.
        raise Rejected(400, f"The monitor type cannot be changed from '{current['type']}' to '{body['type']}'.")
