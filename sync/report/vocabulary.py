"""Pure: the words and signs every report of changes uses, so `obs plan`, `obs diff` (text and the pull-request
comment) and `obs sync` say a change the same way: `+` creates, `~` updates, `-` deletes, `2 to create`."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from sync.core.plan import Action

SIGNS = {Action.CREATE: "+", Action.UPDATE: "~", Action.DELETE: "-", Action.UNCHANGED: "="}
UNMANAGED = "?"  # a live object obs does not manage, shown beside the changes
PENDING = (Action.CREATE, Action.UPDATE, Action.DELETE)
DONE = {Action.CREATE: "created", Action.UPDATE: "updated", Action.DELETE: "deleted"}


def phrase(action: Action, count: int) -> str:
    """`3 to create`, `5 unchanged`."""
    return f"{count} unchanged" if action == Action.UNCHANGED else f"{count} to {action}"


def summary(counts: Mapping[str, int], *, unmanaged: bool = False) -> str:
    """Every action's count, in one order: `1 to create, 0 to update, 0 to delete, 9 unchanged`; with
    `unmanaged`, the live objects left alone too."""
    parts = [phrase(action, counts[action]) for action in Action]
    return ", ".join([*parts, f"{counts['unmanaged']} unmanaged"] if unmanaged else parts)


def counted(actions: Iterable[Action]) -> str:
    """`2 to create, 1 to update`: only the pending actions present."""
    found = list(actions)
    return ", ".join(phrase(a, n) for a in PENDING if (n := found.count(a)))


def applied(done: Mapping[Action, int]) -> str:
    """`3 created, 1 updated, 0 deleted`: what a sync did."""
    return ", ".join(f"{done.get(a, 0)} {DONE[a]}" for a in PENDING)
