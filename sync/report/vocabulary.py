"""Pure: the words and signs every report of changes uses, so `obs plan`, `obs diff` (text and the pull-request
comment) and `obs sync` say a change the same way: `+` creates, `~` updates, `-` deletes, `2 to create`."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from sync.core.plan import Action

SIGNS = {Action.CREATE: "+", Action.UPDATE: "~", Action.DELETE: "-", Action.UNCHANGED: "="}
UNMANAGED = "?"  # a live object obs does not manage, shown beside the changes
PENDING = (Action.CREATE, Action.UPDATE, Action.DELETE)
DONE = {Action.CREATE: "created", Action.UPDATE: "updated", Action.DELETE: "deleted"}
# ANSI colours, on a terminal only: a create green, an update yellow, a delete red; a pass green, a failure red.
GREEN, YELLOW, RED = "32", "33", "31"
COLOURS = {Action.CREATE: GREEN, Action.UPDATE: YELLOW, Action.DELETE: RED}


def painted(text: str, colour: str | None, on: bool) -> str:
    """`text` in this ANSI colour when `on` (the command decides: a terminal, no NO_COLOR), else as it is."""
    return f"\x1b[{colour}m{text}\x1b[0m" if on and colour else text


def many(count: int, noun: str) -> str:
    """`1 metric`, `2 metrics`: a count with its noun in the number it takes."""
    return f"{count} {noun}{'s' * (count != 1)}"


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
