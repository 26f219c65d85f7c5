"""Dashboards as Datadog keeps them: ids, slugs, widget ids, full-replace updates, summaries in the list."""

from __future__ import annotations

import copy
import random
import re
import string
from collections.abc import Iterator
from typing import Any

from datadog_api_client.v1.model.dashboard import Dashboard

from .common import Body, Query, Rejected, integer, now, param, timestamp
from .validate import check

AUTHOR = "fake@example.com"
SLUG_LENGTH = 80
# Server-owned fields a request may carry: the API ignores them (an "id" sent on create was, recorded).
_IGNORED = ("id", "url", "author_handle", "author_name", "created_at", "modified_at", "experience_type")
_KEPT = ("id", "created_at", "author_handle", "author_name")  # what an update keeps of the old dashboard
_SUMMARY = ("id", "title", "description", "layout_type", "url", "created_at", "modified_at", "author_handle")


def not_found(dashboard_id: str) -> Rejected:
    return Rejected(404, f"Dashboard with ID {dashboard_id} not found")  # recorded wording


def slug(title: str) -> str:
    """Lower case, spaces to '-', other punctuation dropped, at most 80 characters (recorded)."""
    return re.sub(r"[^a-z0-9-]", "", title.lower().replace(" ", "-"))[:SLUG_LENGTH]


class Dashboards:
    def __init__(self, rng: random.Random) -> None:
        self.items: dict[str, Body] = {}
        self._rng = rng

    def create(self, body: Body) -> Body:
        stamp = timestamp(now())
        dashboard_id = self._new_id()
        server = {"id": dashboard_id, "created_at": stamp, "author_handle": AUTHOR, "author_name": None}
        self.items[dashboard_id] = self._rewrite(body, server, stamp)
        return copy.deepcopy(self.items[dashboard_id])

    def update(self, dashboard_id: str, body: Body) -> Body:
        # A full replace: only the server's own fields survive from the old dashboard (recorded).
        self.items[dashboard_id] = self._rewrite(body, self.get(dashboard_id), timestamp(now()))
        return copy.deepcopy(self.items[dashboard_id])

    def delete(self, dashboard_id: str) -> Body:
        self.get(dashboard_id)
        del self.items[dashboard_id]
        return {"deleted_dashboard_id": dashboard_id}

    def get(self, dashboard_id: str) -> Body:
        if dashboard_id not in self.items:
            raise not_found(dashboard_id)
        return self.items[dashboard_id]

    def listing(self, query: Query) -> Body:
        start = integer(query, "start") or 0
        count = integer(query, "count")
        # Deletion here is final, so the deleted-dashboards view is always empty.
        found = [] if param(query, "filter[deleted]") == "true" else list(self.items.values())
        found = found[start : None if count is None else start + count]
        summaries = [
            {**{k: d.get(k) for k in _SUMMARY}, "is_read_only": d.get("is_read_only", False), "deleted_at": None}
            for d in found
        ]
        return {"dashboards": summaries}

    def _rewrite(self, body: Body, server: Body, modified: str) -> Body:
        check(body, Dashboard, read_only=True)
        _check_rules(body)
        dashboard = {k: copy.deepcopy(v) for k, v in body.items() if k not in _IGNORED}
        for key in ("description", "notify_list", "template_variables"):
            dashboard.setdefault(key, None)
        for widget in _widgets(dashboard["widgets"]):
            widget.setdefault("id", self._rng.randrange(10**15, 10**16))  # ids sent are kept (recorded)
        return {
            **{k: server[k] for k in _KEPT},
            **dashboard,
            "url": f"/dashboard/{server['id']}/{slug(dashboard['title'])}",
            "modified_at": modified,
        }

    def _new_id(self) -> str:
        alphabet = string.ascii_lowercase + string.digits
        while True:
            candidate = "-".join("".join(self._rng.choices(alphabet, k=3)) for _ in range(3))
            if candidate not in self.items:
                return candidate


def _check_rules(body: Body) -> None:
    # At most 5 tags: the model checks that.
    if any(not tag.startswith("team:") for tag in body.get("tags") or []):
        raise Rejected(400, "Invalid tag format. Valid tag keys are: team.")
    for variable in body.get("template_variables") or []:
        if "default" in variable and "defaults" in variable:
            raise Rejected(400, "'template_variables' is invalid")
        if "" in (variable.get("defaults") or []):
            raise Rejected(400, "Minimum length of parameter 'defaults' should be 1")


def _widgets(widgets: list[Any]) -> Iterator[Body]:
    """Every widget, group widgets' members included."""
    for widget in widgets:
        yield widget
        yield from _widgets(widget["definition"].get("widgets") or [])
