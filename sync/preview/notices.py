"""Pure: what a reviewer must know that the list of changes does not say: a sync that will refuse, an org
left behind, a renamed queue, monitors that now alert nobody, a preview that cannot show everything."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from sync.core import guard
from sync.core.conditions import silenced
from sync.core.plan import Action, Plan
from sync.core.resources import Resource
from sync.preview.facts import Facts

ALLOW_DELETES_LABEL = "obs-allow-deletes"  # the pull-request label that lets the merge's sync delete more
EXAMPLES = 3

# Kinds, most serious first: the order warnings are shown in.
OBS_CODE, EMPTY_BASE, MASS_DELETE, SITE_MOVE, RENAME, SILENCED = (
    "obs-code",
    "empty-base",
    "mass-delete",
    "site-move",
    "queue-rename",
    "alerts-nobody",
)
KINDS = (OBS_CODE, MASS_DELETE, SITE_MOVE, SILENCED, RENAME, EMPTY_BASE)


@dataclass(frozen=True)
class Notice:
    kind: str
    env: str  # "" when it concerns every environment
    text: str


def mass_delete(plan: Plan, base: Sequence[Resource]) -> Notice | None:
    """The sync of this environment will refuse these deletions: the same limit as `obs sync` (core.guard),
    with the base revision's resources as what obs manages there."""
    deletes = sum(c.action == Action.DELETE for c in plan.changes)
    limit = guard.delete_limit(len(base))
    if deletes <= limit:
        return None
    return Notice(
        MASS_DELETE,
        plan.env,
        f"the sync of {plan.env} will refuse to delete {deletes} of the {len(base)} objects obs manages there "
        f"(the limit is {limit}). If these deletions are intended, a reviewer adds the label "
        f"{ALLOW_DELETES_LABEL} before merging: the sync of that merge then allows exactly the deletions "
        f"it makes (--max-deletes {deletes}).",
    )


def site_moves(envs: Sequence[str], base: Facts, head: Facts, old: Mapping[str, Sequence[Resource]]) -> list[Notice]:
    """An environment moved to another Datadog site or org: obs syncs only the new one."""
    found = []
    for env in envs:
        was, now = base.sites.get(env), head.sites.get(env)
        monitors = sum(r.kind.notifies for r in old.get(env, ()))
        if was and now and was != now and monitors:
            found.append(
                Notice(
                    SITE_MOVE,
                    env,
                    f"{env} moves from Datadog site {was} to {now}. The {monitors} monitors obs made on {was} are "
                    f"orphaned there: no sync will touch them again, and they keep evaluating and paging until "
                    f"someone deletes them (monitors tagged managed-by:obs and env:{env} on {was}). The plan "
                    f"above is against an empty org on {now}.",
                )
            )
    return found


def renames(
    envs: Sequence[str],
    base: Facts,
    head: Facts,
    old: Mapping[str, Sequence[Resource]],
    new: Mapping[str, Sequence[Resource]],
) -> list[Notice]:
    """A queue that left the inventory while one just like it came in: the same queue under a new name."""
    gone = sorted(base.queues.keys() - head.queues.keys())
    came = sorted(head.queues.keys() - base.queues.keys())
    found = []
    for was in gone:
        now = next((q for q in came if _same_queue(base.queues[was], head.queues[q])), None)
        if now is None:
            continue
        came.remove(now)
        for env in envs:
            if _watched(old.get(env, ()), was) and _watched(new.get(env, ()), now):
                before, after = base.physical(env, was), head.physical(env, now)
                found.append(
                    Notice(
                        RENAME,
                        env,
                        f"queue {was} is renamed {now}: its monitors are deleted and created again, now watching "
                        f"the AWS queue {after} instead of {before}. Their history, mutes and downtimes are lost; "
                        f"check that {after} exists in AWS before merging.",
                    )
                )
    return found


def alerts_nobody(
    envs: Sequence[str], old: Mapping[str, Sequence[Resource]], new: Mapping[str, Sequence[Resource]]
) -> list[Notice]:
    found = []
    for env in envs:
        keys = silenced(old.get(env, ()), new.get(env, ()))
        if keys:
            named = ", ".join(keys[:EXAMPLES]) + (f" and {len(keys) - EXAMPLES} more" if len(keys) > EXAMPLES else "")
            found.append(
                Notice(
                    SILENCED,
                    env,
                    f"{len(keys)} monitor{'s' * (len(keys) != 1)} of {env} that paged someone now alert nobody "
                    f"({named}): check the environment's notify settings (page: [] notifies no one).",
                )
            )
    return found


# Inventory attributes that name what a queue is attached to; two of them equal is the same queue.
_IDENTITY = ("runbook", "worker", "dlq", "topics", "publisher_log")


def _same_queue(was: Mapping[str, object], now: Mapping[str, object]) -> bool:
    rest = ("name", "description")
    if {k: v for k, v in was.items() if k not in rest} == {k: v for k, v in now.items() if k not in rest}:
        return True
    return sum(k in was and was.get(k) == now.get(k) for k in _IDENTITY) >= 2


def _watched(resources: Sequence[Resource], queue: str) -> bool:
    return any(r.kind.notifies and r.queue == queue for r in resources)


def ordered(warnings: Sequence[Notice], rank: Mapping[str, int]) -> tuple[Notice, ...]:
    """Most serious kind first, then by environment consequence (`rank`: prod before dev)."""
    return tuple(sorted(warnings, key=lambda w: (KINDS.index(w.kind), rank.get(w.env, -1), w.env, w.text)))
