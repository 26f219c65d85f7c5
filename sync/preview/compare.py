"""Pure: the desired resources of two revisions -> per-environment plans and who gets paged differently.

The base revision's resources play the live org, so `obs diff` and `obs plan` share one diff engine.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from sync.core import placeholders
from sync.core.conditions import ConditionChange, condition_changes
from sync.core.diff import FieldChange, diff
from sync.core.namespaces import NO_NAMESPACE, Ownership
from sync.core.paging import AudienceChange, audience_changes
from sync.core.plan import Action, Change, Live, Plan, claimed, make_plan
from sync.core.resources import Resource
from sync.definitions.source import undotted
from sync.errors import ObsError
from sync.preview import notices
from sync.preview.facts import EMPTY, Facts
from sync.preview.groups import SameChange, same_changes

Rendered = Mapping[str, Sequence[Resource]]  # environment -> its desired resources
WORKING_TREE = "working tree"  # the head when no revision is named
# The order changes are shown in within a queue: what changes alerting that exists before what adds some.
ACTION_ORDER = (Action.UPDATE, Action.DELETE, Action.CREATE)


@dataclass(frozen=True)
class Revision:
    """One side of the comparison: what the user called it, the commit it is (none for the working tree),
    its rendered resources and the facts its definition files state."""

    label: str
    rendered: Rendered
    commit: str = ""
    facts: Facts = EMPTY


@dataclass(frozen=True)
class Preview:
    base: str  # what the user called each revision, e.g. "origin/main" and "working tree"
    head: str
    plans: tuple[Plan, ...]  # one per environment, prod first
    paging: tuple[AudienceChange, ...]
    conditions: tuple[ConditionChange, ...] = ()
    notices: tuple[notices.Notice, ...] = ()
    same: tuple[SameChange, ...] = ()
    base_commit: str = ""
    head_commit: str = ""

    @property
    def pending(self) -> bool:
        return any(plan.pending for plan in self.plans)

    def totals(self) -> dict[str, int]:
        counts = [plan.count() for plan in self.plans]
        return {action: sum(c[action] for c in counts) for action in Action}


def consequence(env: str) -> tuple[int, str]:
    """Production first, then staging, then the rest, development last."""
    name = env.lower()
    rank = 0 if "prod" in name else 1 if "stag" in name else 3 if "dev" in name else 2
    return rank, env


def environments(requested: Sequence[str], base: Rendered, head: Rendered) -> tuple[str, ...]:
    """The environments to compare: those asked for, else every one either revision has; prod first."""
    known = sorted(base.keys() | head.keys())
    for name in requested:
        if name not in known:
            raise ObsError.of(f"environment '{name}' is in neither revision", f"use one of: {', '.join(known)}")
    return tuple(sorted(set(requested) if requested else known, key=consequence))


def compare(
    base_label: str,
    head_label: str,
    base: Rendered,
    head: Rendered,
    envs: Sequence[str],
    *,
    base_facts: Facts = EMPTY,
    head_facts: Facts = EMPTY,
    base_commit: str = "",
    head_commit: str = "",
    said: Sequence[notices.Notice] = (),
    ownership: Ownership = NO_NAMESPACE,
) -> Preview:
    """An environment only in base is all deletes; only in head, all creates. `said` are notices the caller
    found (a base without definitions, a change to obs itself). The base's objects are owned as the head's
    namespace (`ownership`) would own them live: another namespace's are neither updated nor deleted."""
    envs = sorted(envs, key=consequence)
    plans: list[Plan] = []
    paging: list[AudienceChange] = []
    conditions: list[ConditionChange] = []
    found = list(said)
    for env in envs:
        old, new = base.get(env, ()), head.get(env, ())
        plan = _plan(env, old, new, ownership)
        plans.append(plan)
        paging += audience_changes(env, old, new)
        conditions += condition_changes(env, old, new)
        refused = notices.mass_delete(plan, old)
        found += [refused] if refused else []
    found += notices.site_moves(envs, base_facts, head_facts, base)
    found += notices.renames(envs, base_facts, head_facts, base, head)
    found += notices.alerts_nobody(envs, base, head)
    rank = {env: index for index, env in enumerate(envs)}
    return Preview(
        base_label,
        head_label,
        tuple(plans),
        tuple(paging),
        tuple(conditions),
        notices.ordered(found, rank),
        same_changes(plans, consequence),
        base_commit,
        head_commit,
    )


def _plan(env: str, base: Sequence[Resource], head: Sequence[Resource], ownership: Ownership) -> Plan:
    # Neither side has live IDs: every object keeps its placeholder, so links to it compare equal.
    live = [_as_live(r, ownership) for r in base]
    plan = make_plan(env, head, live)
    was = {(r.kind, r.key): r for r in base}
    now = {(r.kind, r.key): r for r in head}
    changes = tuple(_completed(c, was.get((c.kind, c.key)), now.get((c.kind, c.key))) for c in plan.changes)
    return dataclasses.replace(plan, changes=changes)


def _as_live(resource: Resource, ownership: Ownership) -> Live:
    """A base resource as the head's namespace would own it live; one that carries no marker at all is the
    base's own, by its key."""
    placeholder = placeholders.placeholder(resource.kind.name, resource.key)
    found = claimed(resource.kind, placeholder, resource.body, ownership)
    return found if found.key is not None or found.foreign else dataclasses.replace(found, key=resource.key)


def _completed(change: Change, was: Resource | None, now: Resource | None) -> Change:
    """No made-up ids, deletes keep their queue, and fields the head dropped count as changes too.

    The plan compares only the fields the head declares (a live object has many more); between two
    revisions of our own bodies, a field that only the base has (a removed warning threshold) is a change."""
    if change.action == Action.DELETE:
        assert was is not None
        return dataclasses.replace(change, id=None, queue=was.queue)
    if change.action == Action.CREATE or was is None or now is None or was.body == now.body:
        return dataclasses.replace(change, id=None)
    known = {f.path for f in change.fields}
    dropped = [FieldChange(f.path, f.new, f.old) for f in diff(change.kind, was.body, now.body) if f.path not in known]
    if not dropped:
        return dataclasses.replace(change, id=None)
    fields = tuple(sorted((*change.fields, *dropped), key=lambda f: _path_order(f.path)))
    return dataclasses.replace(change, action=Action.UPDATE, id=None, fields=fields)


def _path_order(path: str) -> tuple[tuple[int, int, str], ...]:
    """The order the plan lists fields in: keys by name, list items by index."""
    return tuple((0, part, "") if isinstance(part, int) else (1, 0, part) for part in undotted(path))
