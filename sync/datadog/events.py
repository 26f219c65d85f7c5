"""The monitors' real state changes, for `obs backtest --calibrate`: the org's monitor alert events of a period
(the v2 event search, page by page on its cursor), and this definitions set's monitors of one environment, as
`obs plan` finds them (the monitor list, owned by the ownership marker), by id.

The search asks for `source:alert` and nothing narrower: the events are kept by their `monitor_id`, since
whether an alert event carries its monitor's tags is not documented, and a tag filter that missed them would
read as every transition of the model being extra."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sync.core.keys import env_of
from sync.core.kinds import COMPOSITE, MONITOR
from sync.datadog import listing
from sync.datadog.client import Datadog, RequestFailed
from sync.errors import ObsError

QUERY = "source:alert"
PAGE = 1000  # the most one page holds (EventsRequestPage.limit's maximum)
LABEL = "POST /api/v2/events/search"
PERMISSION = "events_read"


def monitor_events(dd: Datadog, start: datetime, end: datetime) -> list[dict[str, Any]]:
    """Every monitor alert event from `start` to `end`, oldest first."""
    window = {"query": QUERY, "from": str(_millis(start)), "to": str(_millis(end))}
    page: dict[str, Any] = {"limit": PAGE}
    found: list[dict[str, Any]] = []
    seen: set[str] = set()
    while True:
        answer = _ask(dd, {"filter": window, "sort": "timestamp", "page": page})
        data = answer.get("data") if isinstance(answer, dict) else None
        found += [item for item in data or () if isinstance(item, dict)]
        after = ((answer.get("meta") or {}).get("page") or {}).get("after") if isinstance(answer, dict) else None
        if not data or not isinstance(after, str) or after in seen:  # a cursor seen before would loop forever
            return found
        seen.add(after)
        page = {"limit": PAGE, "cursor": after}


def owned_monitors(dd: Datadog, env: str) -> dict[int, str]:
    """The environment's monitors and composites this definitions set owns: id -> key."""
    try:
        with dd.shared_reads():  # monitors and composites: one endpoint, read once
            found = [live for kind in (MONITOR, COMPOSITE) for live in listing.listed(dd, kind, env)]
    except RequestFailed as exc:
        raise _failed(dd, exc, "the monitors", "monitors_read") from None
    return {int(live.id): live.key for live in found if live.key and env_of(live.key) == env}


def _ask(dd: Datadog, body: dict[str, Any]) -> Any:
    try:
        return dd.search_events(body)
    except RequestFailed as exc:
        raise _failed(dd, exc, "the monitor alert events", PERMISSION) from None


def _failed(dd: Datadog, exc: RequestFailed, what: str, permission: str) -> ObsError:
    if exc.status == 403:
        return ObsError.of(
            f"Datadog ({dd.host}) refused to give {what}: {exc.detail}",
            f"give the application key the {permission} permission (for a scoped key, the {permission} scope): "
            "obs backtest --calibrate reads the monitors and their alert events, and writes nothing",
        )
    if exc.status == 401:
        return ObsError.of(
            f"Datadog ({dd.host}) did not accept the keys: {exc.detail}",
            "check that DD_API_KEY and DD_APP_KEY are valid keys of the environment's org",
        )
    return ObsError.of(f"could not read {what} from Datadog: {exc}", "try again")


def _millis(moment: datetime) -> int:
    return int(moment.timestamp() * 1000)
