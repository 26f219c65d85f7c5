"""Pure: when a monitor fires, as a person on call reads it, and how that changed between two revisions."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from sync.core import metric_query
from sync.core.durations import number as _number
from sync.core.durations import words as duration
from sync.core.paging import ALWAYS, routes
from sync.core.resources import Resource

_COMPARATORS = {">": "above", ">=": "at or above", "<": "below", "<=": "at or below"}
# Metrics whose value is seconds waited: their threshold reads as a duration of waiting.
_WAITING = ("approximate_age_of_oldest_message",)


@dataclass(frozen=True)
class Condition:
    """The parts of a monitor's alert condition that decide when someone is paged."""

    threshold: str  # "after 4 h" for seconds waited, else "above 10,000"
    waiting: bool
    window: str  # "10 min"
    delay: str  # evaluation delay, "15 min"; "" when none


@dataclass(frozen=True)
class ConditionChange:
    """Paging monitors of one environment whose alert condition changed the same way."""

    env: str
    targets: tuple[str, ...]  # who the alert goes to in the head revision
    before: str
    after: str
    keys: tuple[str, ...]

    @property
    def reads(self) -> str:
        return f"{self.before} -> {self.after}"


def condition(body: Mapping[str, Any]) -> Condition | None:
    """The monitor's alert condition, or None for a query obs cannot read (the preview then says nothing)."""
    query = str(body.get("query", ""))
    head, end = metric_query.head(query), metric_query.tail(query)
    if head is None or head.form or end is None:
        return None
    _, comparator, written = end
    options = body.get("options") or {}
    critical = (options.get("thresholds") or {}).get("critical")
    value = float(critical if isinstance(critical, int | float) else written)
    waiting = any(name in query for name in _WAITING) and comparator.startswith(">")
    threshold = f"after {duration(value)}" if waiting else f"{_COMPARATORS[comparator]} {_number(value)}"
    delay = options.get("evaluation_delay")
    return Condition(
        threshold=threshold,
        waiting=waiting,
        window=duration(head.window.minutes * 60),
        delay=duration(float(delay)) if isinstance(delay, int | float) and delay else "",
    )


def describe(was: Condition, now: Condition) -> tuple[str, str]:
    """Old and new as one reads them, only the parts that changed: `pages after 4 h of waiting` ->
    `pages after 2 h of waiting`, `over 10 min` -> `over 5 min`."""
    before, after = [], []
    if (was.threshold, was.waiting) != (now.threshold, now.waiting):
        before.append(f"pages {was.threshold}{' of waiting' * was.waiting}")
        after.append(f"{now.threshold}{' of waiting' * now.waiting}")
    if was.window != now.window:
        before.append(f"over {was.window}")
        after.append(f"over {now.window}")
    if was.delay != now.delay:
        before.append(f"evaluation delay {was.delay or 'none'}")
        after.append(now.delay or "none")
    return ", ".join(before), ", ".join(after)


def paging_targets(body: Mapping[str, Any]) -> tuple[str, ...]:
    """Who the monitor notifies when it alerts: handles in the alert section or outside every section."""
    found = routes(str(body.get("message", "")))
    return tuple(sorted(found.get("alert", frozenset()) | found.get(ALWAYS, frozenset())))


def condition_changes(env: str, base: Iterable[Resource], head: Iterable[Resource]) -> tuple[ConditionChange, ...]:
    """Monitors that page someone (in either revision) whose alert condition changed, grouped by how."""
    was = {r.key: r for r in base if r.kind.notifies}
    grouped: dict[tuple[tuple[str, ...], str, str], list[str]] = {}
    for resource in head:
        old = was.get(resource.key)
        if not resource.kind.notifies or old is None:
            continue
        targets = paging_targets(resource.body)
        if not targets and not paging_targets(old.body):
            continue
        before, after = condition(old.body), condition(resource.body)
        if before is None or after is None or before == after:
            continue
        grouped.setdefault((targets, *describe(before, after)), []).append(resource.key)
    changes = [ConditionChange(env, t, b, a, tuple(sorted(keys))) for (t, b, a), keys in grouped.items()]
    return tuple(sorted(changes, key=lambda c: (-len(c.keys), c.before, c.after, c.targets)))


def silenced(base: Iterable[Resource], head: Iterable[Resource]) -> tuple[str, ...]:
    """Monitors that alerted someone in the base revision and alert nobody now."""
    paged = {r.key for r in base if r.kind.notifies and paging_targets(r.body)}
    return tuple(sorted(r.key for r in head if r.key in paged and not paging_targets(r.body)))
