"""What obs wants to exist in Datadog: one resource per monitor or dashboard, keyed by its definition."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from sync.core.kinds import Kind

# Text that only obs writes: user text holding any of it (a description, a reason) is refused where it is read.
_MARKER_TEXT = re.compile(r"managed-by:obs|obs-key:|obs-adhoc:|obs-namespace:", re.IGNORECASE)

# Tag keys obs sets itself; a user tag with one of these keys would forge or confuse ownership.
RESERVED_TAG_KEYS = frozenset(
    {"managed-by", "obs-key", "obs-namespace", "env", "queue", "metric", "queue-class", "team"}
)


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


def forged_marker(text: str) -> str | None:
    """The marker text a piece of user text holds, if any (what `Kind.owner` reads must come from obs only)."""
    found = _MARKER_TEXT.search(text)
    return found.group(0) if found else None
