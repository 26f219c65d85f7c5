"""The v2 event search (POST /api/v2/events/search) over monitor alert events a test puts in, answering in the
published shape (EventsListResponse: `data` of EventResponse objects, `meta.page.after` the cursor of the next
page, `links.next` the same as a GET link; a last page has neither).

An EventResponse holds the event's own attributes under `attributes.attributes` (EventAttributes: `monitor_id`,
`status`, `title`, `timestamp` in milliseconds, `monitor` with the `transition` Datadog adds to monitor events)
and, around them, `tags` and an ISO 8601 `timestamp`. The query is `*` or terms `key:value`, all of which an
event must match: `source:` its source (`alert` for a monitor's), any other its tags; `filter.from` and
`filter.to` are milliseconds; at most 1000 a page, 10 unless asked (EventsRequestPage)."""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from .common import Body, Rejected

MAX_PAGE = 1000
DEFAULT_PAGE = 10
_TERM = re.compile(r"^([\w.-]+):(\S+)$")


class Events:
    def __init__(self) -> None:
        self._events: list[tuple[str, Body]] = []  # (source, the EventResponse)

    def put(
        self,
        monitor_id: int,
        at: datetime,
        title: str,
        status: str,
        transition: tuple[str, str] | None = None,
        tags: Sequence[str] = (),
    ) -> Body:
        """One monitor alert event; `transition`: (source_state, destination_state) as Datadog names them."""
        millis = int(at.timestamp() * 1000)
        monitor: Body = {"id": monitor_id, "name": title.split("] ", 1)[-1]}
        if transition is not None:
            monitor["transition"] = {"source_state": transition[0], "destination_state": transition[1]}
        event = {
            "id": f"AAAAA{len(self._events):019d}",
            "type": "event",
            "attributes": {
                "attributes": {
                    "monitor_id": monitor_id,
                    "status": status,
                    "title": title,
                    "timestamp": millis,
                    "monitor": monitor,
                    "monitor_groups": [],
                    "sourcecategory": "monitor_alert",
                },
                "message": title,
                "tags": list(tags),
                "timestamp": at.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")[:-4] + "Z",
            },
        }
        self._events.append(("alert", event))
        return event

    def search(self, body: Any, url: str) -> Body:
        body = body if isinstance(body, Mapping) else {}
        window = body.get("filter") or {}
        terms = _terms(str(window.get("query") or "*"))
        start, end = _millis(window.get("from"), "from"), _millis(window.get("to"), "to")
        page = body.get("page") or {}
        limit = page.get("limit", DEFAULT_PAGE)
        if not isinstance(limit, int) or not 1 <= limit <= MAX_PAGE:
            raise Rejected(400, f"page[limit] must be from 1 to {MAX_PAGE}")  # wording unverified
        chosen = [
            event
            for source, event in self._events
            if start <= event["attributes"]["attributes"]["timestamp"] <= end and _matches(terms, source, event)
        ]
        chosen.sort(key=lambda e: e["attributes"]["attributes"]["timestamp"], reverse=body.get("sort") == "-timestamp")
        first = _offset(page.get("cursor"))
        data = chosen[first : first + limit]
        answer: Body = {"data": data, "meta": {"elapsed": 1, "request_id": "fake", "status": "done"}}
        if first + limit < len(chosen):
            after = base64.urlsafe_b64encode(json.dumps({"after": first + limit}).encode()).decode()
            answer["meta"]["page"] = {"after": after}
            answer["links"] = {"next": f"{url}/api/v2/events?page[cursor]={after}"}
        return answer


def _terms(query: str) -> list[tuple[str, str]]:
    if query.strip() in ("", "*"):
        return []
    found = []
    for word in query.split():
        term = _TERM.match(word)
        if term is None:
            raise Rejected(400, f"the fake reads only key:value terms, not {word!r}")  # the fake's limit
        found.append((term.group(1), term.group(2)))
    return found


def _matches(terms: list[tuple[str, str]], source: str, event: Body) -> bool:
    tags = set(event["attributes"]["tags"])
    return all(value == source if key == "source" else f"{key}:{value}" in tags for key, value in terms)


def _millis(value: Any, name: str) -> int:
    if value is None:
        raise Rejected(400, f"filter.{name} is required here")  # the fake's limit: no date math
    try:
        return int(value)
    except (TypeError, ValueError):
        raise Rejected(400, f"filter.{name} must be a timestamp in milliseconds here") from None


def _offset(cursor: Any) -> int:
    if cursor is None:
        return 0
    try:
        return int(json.loads(base64.urlsafe_b64decode(str(cursor)))["after"])
    except (ValueError, KeyError, TypeError):
        raise Rejected(400, "invalid page[cursor]") from None  # wording unverified
