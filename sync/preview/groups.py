"""Pure: the same field change made to many resources, across environments, said once.

A threshold raised for every queue is one line ("`options.thresholds.critical` 10000 -> 20000 on 1,000
monitors (prod, staging, dev)") instead of a thousand; the per-queue detail below it stays for whoever
needs it.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from sync.core.diff import FieldChange
from sync.core.kinds import Kind
from sync.core.plan import Action, Plan

SHOWN_FROM = 2  # a change made to at least this many resources is listed as one line


@dataclass(frozen=True)
class SameChange:
    field: FieldChange
    kind: Kind
    keys: tuple[str, ...]
    envs: tuple[str, ...]  # in order of consequence

    @property
    def count(self) -> int:
        return len(self.keys)


def same_changes(plans: Sequence[Plan], rank: Callable[[str], Any]) -> tuple[SameChange, ...]:
    """Field changes that several updated resources share, the most widespread first."""
    found: dict[tuple[Kind, str, str, str], tuple[FieldChange, list[str], set[str]]] = {}
    for plan in plans:
        for change in plan.pending:
            if change.action != Action.UPDATE:
                continue
            for field in change.fields:
                at = (change.kind, field.path, _canonical(field.old), _canonical(field.new))
                _, keys, envs = found.setdefault(at, (field, [], set()))
                keys.append(change.key)
                envs.add(plan.env)
    groups = [
        SameChange(field, kind, tuple(sorted(keys)), tuple(sorted(envs, key=rank)))
        for (kind, *_), (field, keys, envs) in found.items()
        if len(keys) >= SHOWN_FROM
    ]
    return tuple(sorted(groups, key=lambda g: (-g.count, g.field.path, g.kind.order, _canonical(g.field.old))))


def _canonical(value: Any) -> str:
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return json.dumps(value, sort_keys=True)
