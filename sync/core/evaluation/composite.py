"""Pure: composite monitors, whose state is a boolean expression over other monitors' states
(https://docs.datadoghq.com/monitors/types/composite/)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from functools import partial
from typing import Any

from sync.core import composite_query
from sync.core.composite_query import Expr, Not, Ref, references
from sync.core.evaluation import notes
from sync.core.evaluation.notes import Refused
from sync.core.evaluation.states import ALERT, ALERT_WORTHY, NO_DATA, OK, SEVERITY, Change, Run, Start, Step, recorded


def parse(query: str) -> Expr:
    """A composite as Datadog or the expansion writes it: monitor IDs or placeholders."""
    try:
        expr = composite_query.parse(query, (composite_query.PLACEHOLDER, composite_query.ID))
    except composite_query.CompositeError as exc:
        raise Refused(str(exc)) from None
    if len(references(expr)) > composite_query.MOST_MONITORS:
        raise Refused(f"a composite combines at most {composite_query.MOST_MONITORS} monitors")
    return expr


def combine(expr: Expr, state_of: Callable[[str], str]) -> str:
    """The documented status algebra: && the least severe when both are alert-worthy, || the most severe
    when either is, ! swaps OK and the alert-worthy states but keeps NO DATA."""
    if isinstance(expr, Ref):
        return state_of(expr.key)
    if isinstance(expr, Not):
        inner = combine(expr.arg, state_of)
        return NO_DATA if inner == NO_DATA else OK if inner in ALERT_WORTHY else ALERT
    a, b = combine(expr.left, state_of), combine(expr.right, state_of)
    if expr.op == "&&":
        return min(a, b, key=SEVERITY.__getitem__) if a in ALERT_WORTHY and b in ALERT_WORTHY else OK
    return max(a, b, key=SEVERITY.__getitem__) if a in ALERT_WORTHY or b in ALERT_WORTHY else OK


def _state(constituents: Mapping[str, Run], at: int, ref: str) -> str:
    return constituents[ref].state_at(at)


def run(
    key: str,
    body: Mapping[str, Any],
    constituents: Mapping[str, Run],
    duration: int,
    used: set[notes.Assumption],
    start: Start | None = None,
) -> Run:
    """`start`: where the scenario finds the composite; by default, what its monitors' starting states make it."""
    expr = parse(str(body.get("query", "")))
    missing = [ref for ref in references(expr) if ref not in constituents]
    if missing:
        raise Refused(f"the composite refers to {missing[0]}, which this environment does not have")
    notify_no_data = bool((body.get("options") or {}).get("notify_no_data"))
    used.add(notes.COMPOSITE_LAG)
    start = start or _derived(expr, constituents, notify_no_data)
    # U17: recomputed every minute from the states its monitors had a minute before, so it can change only at
    # minute 0 and a minute after one of theirs does: only those minutes are walked (all of them for a report).
    due = {t + 1 for ref in references(expr) for t, _, _ in constituents[ref].changes if t < duration}
    walk = partial(_walk, expr, constituents, notify_no_data, start)
    changes = walk(sorted({0} | due), None)
    return Run(key, changes, notify_no_data, start, recorded(partial(walk, range(duration + 1))))


def _walk(
    expr: Expr,
    constituents: Mapping[str, Run],
    notify_no_data: bool,
    start: Start,
    minutes: Iterable[int],
    steps: list[Step] | None,
) -> tuple[Change, ...]:
    changes: list[Change] = []
    state = start.state
    for t in minutes:
        result = combine(expr, partial(_state, constituents, t - 1))
        kept = result == NO_DATA and not notify_no_data
        if not kept and result != state:
            changes.append((t, state, result))
            state = result
        if steps is not None:
            steps.append(Step(t, state, note="NO DATA without notify_no_data: last state kept" if kept else ""))
    return tuple(changes)


def _derived(expr: Expr, constituents: Mapping[str, Run], notify_no_data: bool) -> Start:
    """The composite's state before minute 0 from its monitors' starting states, alerting since the latest of
    them began (before that, their combination did not yet hold)."""
    state = combine(expr, lambda ref: constituents[ref].start.state)
    if state == OK or (state == NO_DATA and not notify_no_data):
        return Start()
    began = [run.start.since for run in constituents.values() if run.start.state in ALERT_WORTHY]
    # A negated monitor that is OK alerts with none of them alerting: from minute 0, as far as the scenario says.
    return Start(state, min(began, default=0))
