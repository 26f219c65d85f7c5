"""Pure: the safety checks a sync passes before it writes anything."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace

from sync.core.plan import Action, Plan
from sync.core.resources import Resource
from sync.errors import ObsError

MIN_DELETE_LIMIT, MAX_DELETE_LIMIT, DELETE_SHARE = 10, 25, 0.10


def delete_limit(managed: int) -> int:
    """How many orphans one sync may delete: 10% of what we manage, at least 10 and at most 25."""
    return min(MAX_DELETE_LIMIT, max(MIN_DELETE_LIMIT, math.ceil(managed * DELETE_SHARE)))


def check(
    plan: Plan, desired: Sequence[Resource], *, allow_mass_delete: bool = False, max_deletes: int | None = None
) -> None:
    if not desired:
        raise ObsError.of(
            f"the definitions expand to nothing in {plan.env!r}: refusing to sync, "
            "which would delete every object obs manages there",
            "check --definitions and the environment's queues and metrics",
        )
    # Duplicate repairs are not counted: each deletes an exact copy whose twin stays.
    orphans = [c for c in plan.changes if c.action == Action.DELETE and c.duplicate_of is None]
    managed = sum(c.action in (Action.UPDATE, Action.UNCHANGED) for c in plan.changes) + len(orphans)
    limit = delete_limit(managed) if max_deletes is None else max_deletes
    if len(orphans) > limit and not allow_mass_delete:
        raise ObsError.of(
            f"refusing to delete {len(orphans)} of the {managed} objects obs manages in {plan.env!r} "
            f"(the limit is {limit})",
            "check that the definitions are complete; if these deletions are intended, run again with "
            "--allow-mass-delete (or raise --max-deletes)",
        )


def without_deletes(plan: Plan) -> Plan:
    """The plan for --no-delete: orphans and duplicates stay."""
    return replace(plan, changes=tuple(c for c in plan.changes if c.action != Action.DELETE))
