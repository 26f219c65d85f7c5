"""What obs wants to exist in Datadog: one resource per monitor or dashboard, keyed by its definition."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from sync.core.keys import Key

if TYPE_CHECKING:  # the kinds read markers with the functions below
    from sync.core.kinds import Kind

MANAGED_TAG = "managed-by:obs"
KEY_TAG_PREFIX = "obs-key:"
DASHBOARD_MARKER = "managed-by:obs obs-key:"
DOWNTIME_MARKER = DASHBOARD_MARKER  # the last line of a downtime's message
# An ad-hoc downtime (obs maintenance start) is obs's but not the definitions': a sync must neither keep it
# in line with them nor delete it, so it carries a marker of its own that reads as unmanaged.
ADHOC_MARKER = "managed-by:obs-maintenance obs-adhoc:"

# Text that only obs writes: user text holding any of it (a description, a reason) is refused where it is read.
_MARKER_TEXT = re.compile(r"managed-by:obs|obs-key:|obs-adhoc:", re.IGNORECASE)

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
        return self.kind.title(self.body)


def sort_key(resource: Resource) -> tuple[int, str]:
    return resource.kind.order, resource.key


def dashboard_marker(key: str) -> str:
    """The description line that marks a dashboard as ours; dashboards cannot carry free tags."""
    return f"{DASHBOARD_MARKER}{key}"


def marker_key(text: str, marker: str) -> str | None:
    """The key in a message's or description's marker line. Only the last line counts: obs writes it after
    any user text, so text above it (a pasted marker, say) can neither forge ownership nor break it."""
    lines = str(text or "").rstrip().splitlines()
    last = lines[-1].strip() if lines else ""
    if not last.startswith(marker):
        return None
    key = last.removeprefix(marker)
    return key if Key.parse(key) is not None else None


def tags_key(tags: Iterable[str]) -> str | None:
    """The key of an object that carries both marker tags; one with two keys counts as unmanaged."""
    tags = list(tags)
    keys = [t.removeprefix(KEY_TAG_PREFIX) for t in tags if t.startswith(KEY_TAG_PREFIX)]
    return keys[0] if MANAGED_TAG in tags and len(keys) == 1 and keys[0] else None


def forged_marker(text: str) -> str | None:
    """The marker text a piece of user text holds, if any (what `Kind.owner` reads must come from obs only)."""
    found = _MARKER_TEXT.search(text)
    return found.group(0) if found else None
