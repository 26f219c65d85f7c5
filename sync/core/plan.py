"""Pure: desired resources x live objects -> the changes that make live match desired.

Live objects are matched to desired resources by kind and key; each pair is compared by its kind's diff
rules (sync.core.diff), so that a plan right after a sync is empty.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from sync.core import placeholders
from sync.core.diff import FieldChange, diff, same
from sync.core.keys import env_of
from sync.core.kinds import Kind
from sync.core.namespaces import Ownership
from sync.core.resources import Resource


class Action(StrEnum):
    """What a change does to its object; the values are what json output and saved plans say."""

    CREATE = "create"
    UPDATE = "update"
    DELETE = "delete"
    UNCHANGED = "unchanged"


@dataclass(frozen=True)
class Live:
    """An object read from Datadog; `key` is None when it lacks our ownership marker."""

    kind: Kind
    id: str
    key: str | None
    body: Mapping[str, Any]
    created: str = ""  # the server's creation time, ISO 8601: of two objects with one key the older is kept
    # Marked without a namespace, and ours only to take over (the definitions' namespace says adopt_unnamespaced).
    unnamespaced: bool = False
    foreign: bool = False  # marked by another definitions set (another namespace): never touched, never adopted


def claimed(kind: Kind, id: str, body: Mapping[str, Any], ownership: Ownership, created: str = "") -> Live:
    """A live (or rendered) object as the definitions set of `ownership` sees it: its key where it is theirs."""
    mark = kind.mark(body)
    key = ownership.key(mark)
    foreign = mark is not None and key is None
    return Live(kind, id, key, body, created, unnamespaced=ownership.takes_over(mark), foreign=foreign)


@dataclass(frozen=True)
class Change:
    action: Action
    kind: Kind
    key: str
    title: str
    env: str
    queue: str | None = None
    id: str | None = None
    fields: tuple[FieldChange, ...] = ()
    note: str = ""  # why, when the action alone does not say it: a duplicate, an adoption, a replacement
    replace: bool = False  # the change cannot be made in place: delete and create, with a new ID
    duplicate_of: str | None = None  # deletes an exact copy of this live object, which stays
    body: Mapping[str, Any] | None = None  # what to write, dashboard links resolved to the IDs known now
    removes: Mapping[str, Any] | None = None  # a deletion: what the live object holds (its kind's approved_by)


@dataclass(frozen=True)
class Plan:
    env: str
    changes: tuple[Change, ...]
    unmanaged: tuple[Live, ...] = ()

    def count(self) -> dict[str, int]:
        counts = Counter(c.action for c in self.changes)
        return {**{a: counts.get(a, 0) for a in Action}, "unmanaged": len(self.unmanaged)}

    @property
    def pending(self) -> tuple[Change, ...]:
        return tuple(c for c in self.changes if c.action != Action.UNCHANGED)

    @property
    def awaiting(self) -> list[str]:
        """Dashboards whose IDs pending writes still wait for: the sync fills them in once it knows them."""
        return placeholders.awaited(c.body for c in self.pending if c.body is not None)


def make_plan(env: str, desired: Sequence[Resource], live: Sequence[Live], *, adopt: bool = False) -> Plan:
    """Match desired and live by (kind, key) within one environment.

    Live objects of other environments are not looked at. Of two live objects with one key one is kept
    (the older, unless only the newer has the right type) and the other deleted. A live object without our
    marker is never changed, except that with `adopt` one whose name matches a desired resource is taken
    over, keeping its ID.
    """
    wanted = {(r.kind, r.key): r for r in desired}
    current: dict[tuple[Kind, str], Live] = {}
    extras: dict[tuple[Kind, str], list[Live]] = {}
    for (kind, key), twins in _owned(env, live, wanted).items():
        if len(twins) > 1:
            twins.sort(key=lambda o: _keep_first(wanted.get((kind, key)), o))
        current[kind, key], *extras[kind, key] = twins
    by_title = _unmanaged_by_title(desired, live)
    adopted = _adopted(desired, current, by_title) if adopt else {}
    bodies = _linked(wanted, {**current, **adopted})
    changes = [_twin(bodies.get(at), keep, twin, env) for at, keep in current.items() for twin in extras[at]]
    for at, resource in wanted.items():
        match = current.pop(at, None) or adopted.get(at)
        changes.append(
            _change(Action.CREATE, resource, bodies[at]) if match is None else _matched(resource, bodies[at], match)
        )
    for (kind, key), orphan in current.items():
        changes.append(
            Change(Action.DELETE, kind, key, orphan.kind.title(orphan.body), env, id=orphan.id, removes=_held(orphan))
        )
    changes.sort(key=lambda c: (c.kind.order, c.key, c.id or ""))
    unmanaged = sorted((o for found in by_title.values() for o in found), key=lambda o: (o.kind.order, o.id))
    return Plan(env=env, changes=tuple(changes), unmanaged=tuple(unmanaged))


def _adopted(
    desired: Sequence[Resource], current: Mapping[tuple[Kind, str], Live], by_title: dict[tuple[Kind, str], list[Live]]
) -> dict[tuple[Kind, str], Live]:
    """Unmanaged objects taken over: the one object of its kind and type named as a resource obs has no object for
    (taken out of `by_title`, so it is not reported as unmanaged as well)."""
    adopted: dict[tuple[Kind, str], Live] = {}
    for resource in desired:
        found = by_title.get((resource.kind, resource.title.strip()), [])
        if (resource.kind, resource.key) not in current and len(found) == 1 and _same_type(resource, found[0]):
            adopted[resource.kind, resource.key] = found.pop()
    return adopted


def _matched(resource: Resource, body: Mapping[str, Any], match: Live) -> Change:
    """A resource and the live object that is (or becomes) it: unchanged, updated in place, or replaced."""
    fields = diff(resource.kind, body, match.body)
    note = f"adopts unmanaged {resource.kind} {match.id}, keeping its ID" if match.key is None else ""
    if match.unnamespaced:
        note = f"adopts {resource.kind} {match.id}, written without a namespace, keeping its ID"
    rules = resource.kind.diff
    fixed = next((f.path for f in fields if f.path in (rules.fixed, *rules.recreate_on)), None)
    if fixed is not None:
        note = f"its {fixed} cannot change in place: it is deleted and created again, with a new ID"
    action = Action.UPDATE if fields else Action.UNCHANGED
    return _change(action, resource, body, match.id, fields, note, replace=fixed is not None)


def _owned(
    env: str, live: Sequence[Live], wanted: Mapping[tuple[Kind, str], Resource]
) -> dict[tuple[Kind, str], list[Live]]:
    """This environment's objects by key. An object written without a namespace is taken over only where the
    definitions want its key and no object of the namespace has it: never deleted, never a twin of ours."""
    owned: dict[tuple[Kind, str], list[Live]] = {}
    for obj in live:
        if obj.key is not None and env_of(obj.key) == env:
            owned.setdefault((obj.kind, obj.key), []).append(obj)
    for at, found in list(owned.items()):
        ours = [obj for obj in found if not obj.unnamespaced]
        if ours:
            owned[at] = ours
        elif at not in wanted:
            del owned[at]
    return owned


def _keep_first(resource: Resource | None, obj: Live) -> tuple[bool, str, str]:
    """Of live objects with one key, keep one whose type can be updated in place, then the oldest."""
    return not _fits(resource, obj), obj.created, obj.id.zfill(20)


def _fits(resource: Resource | None, obj: Live) -> bool:
    """Whether the live object can become the resource in place (its type or layout is the same)."""
    fixed = obj.kind.diff.fixed
    return resource is None or same(obj.kind, fixed, resource.body.get(fixed), obj.body.get(fixed))


def _linked(
    wanted: Mapping[tuple[Kind, str], Resource], matched: Mapping[tuple[Kind, str], Live]
) -> dict[tuple[Kind, str], Mapping[str, Any]]:
    """Desired bodies with the IDs of the objects that keep theirs put in place of their placeholders; an
    object to be created or replaced has no ID yet, and its placeholder stays until the sync has written it."""
    ids = {
        (kind.name, key): obj.id
        for (kind, key), obj in matched.items()
        if (kind, key) in wanted and _fits(wanted[kind, key], obj)
    }
    return {at: placeholders.resolve(r.body, ids) if r.kind.links else r.body for at, r in wanted.items()}


def _twin(body: Mapping[str, Any] | None, keep: Live, twin: Live, env: str) -> Change:
    """A second live object with a key. An exact copy (a create retried after its answer was lost) is a
    duplicate; one that differs may be a person's copy, so its deletion counts as an orphan's."""
    title, removes = twin.kind.title(twin.body), _held(twin)
    if body is not None and not diff(twin.kind, body, twin.body):
        note = f"duplicate of {twin.kind} {keep.id}, which is kept"
        return Change(
            Action.DELETE,
            twin.kind,
            twin.key or "",
            title,
            env,
            id=twin.id,
            note=note,
            duplicate_of=keep.id,
            removes=removes,
        )
    note = f"a second {twin.kind} with this key, kept {keep.id} instead (a copy made by hand?)"
    return Change(Action.DELETE, twin.kind, twin.key or "", title, env, id=twin.id, note=note, removes=removes)


def _held(obj: Live) -> dict[str, Any]:
    return {field: obj.body[field] for field in obj.kind.approved_by if field in obj.body}


def _unmanaged_by_title(desired: Sequence[Resource], live: Sequence[Live]) -> dict[tuple[Kind, str], list[Live]]:
    """Unmanaged live objects that share a name with a desired resource: the ones worth reporting."""
    titles = {(r.kind, r.title.strip()) for r in desired}
    found: dict[tuple[Kind, str], list[Live]] = {}
    for obj in live:
        title = (obj.kind, obj.kind.title(obj.body).strip())
        if obj.key is None and not obj.foreign and title in titles:
            found.setdefault(title, []).append(obj)
    return found


def _same_type(resource: Resource, obj: Live) -> bool:
    return same(resource.kind, "type", resource.body.get("type"), obj.body.get("type"))


def _change(
    action: Action,
    resource: Resource,
    body: Mapping[str, Any],
    live_id: str | None = None,
    fields: tuple[FieldChange, ...] = (),
    note: str = "",
    replace: bool = False,
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
        note,
        replace,
        body=body,
    )
