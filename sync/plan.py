"""Pure: desired resources x live objects -> the changes that make live match desired.

Only what we own is compared: the live object is projected onto the desired body's shape, then the
server's known rewrites are normalised away, so that a plan right after a sync is empty.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .resources import KIND_ORDER, Resource, title_of

CREATE, UPDATE, DELETE, UNCHANGED = "create", "update", "delete", "unchanged"
ACTIONS = (CREATE, UPDATE, DELETE, UNCHANGED)

_ABSENT = object()
_TYPE_ALIASES = {"metric alert": "query alert"}  # the server swaps these two for classic metric queries


@dataclass(frozen=True)
class Live:
    """An object read from Datadog; `key` is None when it lacks our ownership marker."""

    kind: str
    id: str
    key: str | None
    body: Mapping[str, Any]


@dataclass(frozen=True)
class FieldChange:
    path: str
    old: Any
    new: Any


@dataclass(frozen=True)
class Change:
    action: str
    kind: str
    key: str
    title: str
    env: str
    queue: str | None = None
    id: str | None = None
    fields: tuple[FieldChange, ...] = ()


@dataclass(frozen=True)
class Plan:
    env: str
    changes: tuple[Change, ...]
    unmanaged: tuple[Live, ...] = ()

    def count(self) -> dict[str, int]:
        counts = Counter(c.action for c in self.changes)
        return {**{a: counts.get(a, 0) for a in ACTIONS}, "unmanaged": len(self.unmanaged)}

    @property
    def pending(self) -> tuple[Change, ...]:
        return tuple(c for c in self.changes if c.action != UNCHANGED)


def make_plan(env: str, desired: Sequence[Resource], live: Sequence[Live]) -> Plan:
    """Match desired and live by (kind, key); live objects without our marker are only reported."""
    owned = {(o.kind, o.key): o for o in live if o.key is not None}
    changes = []
    for resource in desired:
        current = owned.pop((resource.kind, resource.key), None)
        if current is None:
            changes.append(_change(CREATE, resource))
            continue
        fields = diff(resource.body, current.body)
        changes.append(_change(UPDATE if fields else UNCHANGED, resource, current.id, fields))
    for (kind, key), orphan in owned.items():
        title = title_of(orphan.body)
        changes.append(Change(DELETE, kind, str(key), title, env, id=orphan.id))
    changes.sort(key=lambda c: (KIND_ORDER.index(c.kind), c.key))
    unmanaged = tuple(sorted((o for o in live if o.key is None), key=lambda o: (o.kind, o.id)))
    return Plan(env=env, changes=tuple(changes), unmanaged=unmanaged)


def _change(
    action: str, resource: Resource, live_id: str | None = None, fields: tuple[FieldChange, ...] = ()
) -> Change:
    return Change(
        action,
        resource.kind,
        resource.key,
        resource.title,
        resource.env,
        resource.queue,
        live_id,
        fields,
    )


def diff(desired: Mapping[str, Any], live: Mapping[str, Any]) -> tuple[FieldChange, ...]:
    """Field changes from live to desired, as dotted paths, over the desired body's keys only."""
    found: list[FieldChange] = []
    _diff(desired, live, "", found)
    return tuple(found)


def _diff(want: Any, have: Any, path: str, found: list[FieldChange]) -> None:
    if isinstance(want, Mapping) and isinstance(have, Mapping):
        for key in sorted(want):
            if key == "id":
                continue  # ids are the server's, at any depth (a dashboard's, its widgets')
            sub = f"{path}.{key}" if path else str(key)
            _diff(want[key], have.get(key, _ABSENT), sub, found)
        return
    if isinstance(want, list) and isinstance(have, list) and len(want) == len(have) and path != "tags":
        for index, (w, h) in enumerate(zip(want, have, strict=True)):
            _diff(w, h, f"{path}[{index}]", found)
        return
    if _normal(want, path) != _normal(have, path):
        found.append(FieldChange(path, None if have is _ABSENT else have, want))


def _normal(value: Any, path: str) -> Any:
    """The comparable form of a leaf: the server's rewrites undone."""
    if value is _ABSENT or value is None or value == {}:
        return None  # null, absent and an empty mapping (the server drops `thresholds: {}`) mean the same
    if path == "priority" and value == 0:
        return None  # the server stores priority 0 as null
    if isinstance(value, bool):
        return value
    if isinstance(value, int | float):
        return float(value)  # thresholds come back as floats: 2 == 2.0
    if isinstance(value, str):
        text = value.strip()  # name, message and query are trimmed server-side
        return _TYPE_ALIASES.get(text, text) if path == "type" else text
    if isinstance(value, list):
        items = [_normal(v, path) for v in value]
        return sorted(map(repr, items)) if path == "tags" else items
    if isinstance(value, Mapping):
        return {k: _normal(v, path) for k, v in value.items() if k != "id" and v is not None}
    return value
