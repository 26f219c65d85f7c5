"""What obs wants to exist in Datadog: one resource per monitor or dashboard, keyed by its definition."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from sync.core.kinds import Kind

MANAGED_TAG = "managed-by:obs"
KEY_TAG_PREFIX = "obs-key:"
DASHBOARD_MARKER = "managed-by:obs obs-key:"
DOWNTIME_MARKER = DASHBOARD_MARKER  # the last line of a downtime's message
# An ad-hoc downtime (obs maintenance start) is obs's but not the definitions': a sync must neither keep it
# in line with them nor delete it, so it carries a marker of its own that reads as unmanaged.
ADHOC_MARKER = "managed-by:obs-maintenance obs-adhoc:"

# Tag keys obs sets itself; a user tag with one of these keys would forge or confuse ownership.
RESERVED_TAG_KEYS = frozenset({"managed-by", "obs-key", "env", "queue", "metric", "queue-class", "team"})


@dataclass(frozen=True)
class Resource:
    """A desired Datadog object: its kind, stable key (e.g. prod/critical/age) and exact API request body."""

    kind: Kind
    key: str
    body: Mapping[str, Any]
    env: str
    queue: str | None = None

    @property
    def title(self) -> str:
        return title_of(self.body)


def title_of(body: Mapping[str, Any]) -> str:
    """What a person calls the object: a monitor's name, a dashboard's title, the first line of a downtime's
    message or of an SLO correction's description."""
    named = body.get("name") or body.get("title")
    return str(named) if named else str(body.get("message") or body.get("description") or "").partition("\n")[0]


def sort_key(resource: Resource) -> tuple[int, str]:
    return resource.kind.order, resource.key


def dashboard_marker(key: str) -> str:
    """The description line that marks a dashboard as ours; dashboards cannot carry free tags."""
    return f"{DASHBOARD_MARKER}{key}"
