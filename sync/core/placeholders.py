"""Pure: the placeholder a monitor message holds for a dashboard ID that exists only once the dashboard does.

Expansion writes the placeholder; the plan and the sync put in the live ID (dashboards are written before
the monitors that link to them).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

PLACEHOLDER = "${dashboard_id:%s}"
_PLACEHOLDER = re.compile(r"\$\{dashboard_id:([^}]+)\}")
PLACEHOLDER_NOTE = (
    "Monitor messages link to dashboards by ID; where the ID is not known yet they show ${dashboard_id:KEY}, "
    "which obs sync replaces with the live dashboard's ID."
)


def dashboard_placeholder(key: str) -> str:
    return PLACEHOLDER % key


def placeholders(text: str) -> set[str]:
    """The dashboard keys whose IDs a text still waits for."""
    return set(_PLACEHOLDER.findall(text))


def awaited(bodies: Iterable[Mapping[str, Any]]) -> list[str]:
    """The dashboard keys whose IDs monitor messages among these bodies wait for."""
    return sorted(set().union(*(placeholders(str(body.get("message", ""))) for body in bodies)))


def resolve(body: Mapping[str, Any], ids: Mapping[str, str], *, drop_unresolved: bool = False) -> Mapping[str, Any]:
    """A monitor body with dashboard IDs put into its message. With `drop_unresolved`, a line whose
    dashboard has no ID (its create failed) is left out rather than sent with a placeholder."""
    message = body.get("message")
    if not isinstance(message, str) or "${dashboard_id:" not in message:
        return body
    resolved = _PLACEHOLDER.sub(lambda m: ids.get(m.group(1), m.group(0)), message)
    if drop_unresolved:
        resolved = "\n".join(line for line in resolved.split("\n") if not placeholders(line))
    return {**body, "message": resolved}
