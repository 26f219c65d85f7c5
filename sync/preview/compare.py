"""Pure: the desired resources of two revisions -> per-environment plans and who gets paged differently.

The base revision's resources play the live org, so `obs diff` and `obs plan` share one diff engine.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from sync.core import placeholders
from sync.core.paging import AudienceChange, audience_changes
from sync.core.plan import ACTIONS, CREATE, DELETE, UPDATE, Change, FieldChange, Live, Plan, diff, make_plan
from sync.core.resources import Resource
from sync.definitions.source import undotted
from sync.errors import ObsError

Rendered = Mapping[str, Sequence[Resource]]  # environment -> its desired resources
WORKING_TREE = "working tree"  # the head when no revision is named


@dataclass(frozen=True)
class Preview:
    base: str  # what the user called each revision, e.g. "origin/main" and "working tree"
    head: str
    plans: tuple[Plan, ...]  # one per environment, by name
    paging: tuple[AudienceChange, ...]

    @property
    def pending(self) -> bool:
        return any(plan.pending for plan in self.plans)

    def totals(self) -> dict[str, int]:
        counts = [plan.count() for plan in self.plans]
        return {action: sum(c[action] for c in counts) for action in ACTIONS}


def environments(requested: Sequence[str], base: Rendered, head: Rendered) -> tuple[str, ...]:
    """The environments to compare: those asked for, else every one either revision has."""
    known = sorted(base.keys() | head.keys())
    for name in requested:
        if name not in known:
            raise ObsError.of(f"environment '{name}' is in neither revision", f"use one of: {', '.join(known)}")
    return tuple(sorted(set(requested))) if requested else tuple(known)


def compare(base_label: str, head_label: str, base: Rendered, head: Rendered, envs: Sequence[str]) -> Preview:
    """An environment only in base is all deletes; only in head, all creates."""
    plans: list[Plan] = []
    paging: list[AudienceChange] = []
    for env in envs:
        old, new = base.get(env, ()), head.get(env, ())
        plans.append(_plan(env, old, new))
        paging += audience_changes(env, old, new)
    return Preview(base_label, head_label, tuple(plans), tuple(paging))


def _plan(env: str, base: Sequence[Resource], head: Sequence[Resource]) -> Plan:
    # Neither side has live IDs: every object keeps its placeholder, so links to it compare equal.
    live = [Live(r.kind, placeholders.placeholder(r.kind.name, r.key), r.key, r.body) for r in base]
    plan = make_plan(env, head, live)
    was = {(r.kind, r.key): r for r in base}
    now = {(r.kind, r.key): r for r in head}
    changes = tuple(_completed(c, was.get((c.kind, c.key)), now.get((c.kind, c.key))) for c in plan.changes)
    return dataclasses.replace(plan, changes=changes)


def _completed(change: Change, was: Resource | None, now: Resource | None) -> Change:
    """No made-up ids, deletes keep their queue, and fields the head dropped count as changes too.

    The plan compares only the fields the head declares (a live object has many more); between two
    revisions of our own bodies, a field that only the base has (a removed warning threshold) is a change."""
    if change.action == DELETE:
        assert was is not None
        return dataclasses.replace(change, id=None, queue=was.queue)
    if change.action == CREATE or was is None or now is None or was.body == now.body:
        return dataclasses.replace(change, id=None)
    known = {f.path for f in change.fields}
    dropped = [FieldChange(f.path, f.new, f.old) for f in diff(was.body, now.body) if f.path not in known]
    if not dropped:
        return dataclasses.replace(change, id=None)
    fields = tuple(sorted((*change.fields, *dropped), key=lambda f: _path_order(f.path)))
    return dataclasses.replace(change, action=UPDATE, id=None, fields=fields)


def _path_order(path: str) -> tuple[tuple[int, int, str], ...]:
    """The order the plan lists fields in: keys by name, list items by index."""
    return tuple((0, part, "") if isinstance(part, int) else (1, 0, part) for part in undotted(path))
