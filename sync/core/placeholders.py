"""Pure: placeholders for the IDs of objects that exist only once they are created.

A monitor message links to a dashboard by ID; a burn-rate monitor's query, a dashboard's SLO widget and an SLO
correction refer to an SLO by ID.
Expansion writes `${<kind>_id:<key>}`; the plan and the sync put in the live ID (what others link to is
written first, see Kind.order).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

Ref = tuple[str, str]  # (kind name, key)

_PLACEHOLDER = re.compile(r"\$\{([a-z_]+)_id:([^}]+)\}")
PLACEHOLDER_NOTE = (
    "Monitor messages link to dashboards by ID; where the ID is not known yet they show ${dashboard_id:KEY}, "
    "which obs sync replaces with the live dashboard's ID. Burn-rate monitors, SLO corrections and the dashboard's "
    "SLO widgets likewise show ${slo_id:KEY} until the SLO exists."
)


def placeholder(kind: str, key: str) -> str:
    return f"${{{kind}_id:{key}}}"


def dashboard_placeholder(key: str) -> str:
    return placeholder("dashboard", key)


def refs(text: str) -> set[Ref]:
    """The objects whose IDs a text still waits for."""
    return {(kind, key) for kind, key in _PLACEHOLDER.findall(text)}


def awaits(text: str, kind: str = "dashboard") -> bool:
    """Whether a text (a body as `obs render` writes it) waits for the ID of an object of a kind."""
    return any(found == kind for found, _ in refs(text))


def unresolved(body: Mapping[str, Any]) -> set[Ref]:
    """The objects whose IDs a body's text still waits for, at any depth (a dashboard widget's SLO)."""
    return set().union(*(refs(text) for text in _texts(body)))


def _texts(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value] if "_id:" in value else []
    if isinstance(value, Mapping):
        return [text for item in value.values() for text in _texts(item)]
    if isinstance(value, list):
        return [text for item in value for text in _texts(item)]
    return []


def _holds(value: Any) -> bool:
    """Whether a placeholder is anywhere in the value: `_texts` without collecting, as a plan asks it of every
    field of ten thousand bodies."""
    if isinstance(value, str):
        return "${" in value and _PLACEHOLDER.search(value) is not None
    if isinstance(value, list):
        return any(map(_holds, value))
    return isinstance(value, Mapping) and any(map(_holds, value.values()))


def awaited(bodies: Iterable[Mapping[str, Any]], kind: str = "dashboard") -> list[str]:
    """The keys of the objects of a kind whose IDs these bodies wait for."""
    return sorted({key for body in bodies for k, key in unresolved(body) if k == kind})


def resolve(body: Mapping[str, Any], ids: Mapping[Ref, str], *, drop_unresolved: bool = False) -> Mapping[str, Any]:
    """A body with the known IDs put in. With `drop_unresolved`, what refers to an object that has no ID (its
    create failed) is left out rather than sent with a placeholder: a message line, or an object in a list (a
    dashboard's widget of an SLO); elsewhere a placeholder stays, and the writer refuses to send it."""
    found = {field: value for field, value in body.items() if _holds(value)}
    if not found:
        return body
    resolved = {field: _filled(value, ids) for field, value in found.items()}
    if drop_unresolved:
        resolved = {field: _dropped(value) for field, value in resolved.items()}
        if "message" in resolved:
            resolved["message"] = "\n".join(line for line in resolved["message"].split("\n") if not refs(line))
    return {**body, **resolved}


def _dropped(value: Any) -> Any:
    """The value without the objects in its lists that still wait for an ID."""
    if isinstance(value, Mapping):
        return {key: _dropped(item) for key, item in value.items()}
    if isinstance(value, list):
        kept = [_dropped(item) for item in value]  # inner lists first: a group keeps its other widgets
        return [item for item in kept if not (isinstance(item, Mapping) and unresolved(item))]
    return value


def _filled(value: Any, ids: Mapping[Ref, str]) -> Any:
    if isinstance(value, str):
        return _PLACEHOLDER.sub(lambda m: ids.get((m.group(1), m.group(2)), m.group(0)), value)
    if isinstance(value, Mapping):
        return {key: _filled(item, ids) for key, item in value.items()}
    if isinstance(value, list):
        return [_filled(item, ids) for item in value]
    return value
