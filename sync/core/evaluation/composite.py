"""Pure: composite monitors, whose state is a boolean expression over other monitors' states
(https://docs.datadoghq.com/monitors/types/composite/)."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import partial
from typing import Any

from sync.core.evaluation import notes
from sync.core.evaluation.notes import Refused
from sync.core.evaluation.states import ALERT, ALERT_WORTHY, NO_DATA, OK, SEVERITY, Run, Step

_TOKEN = re.compile(r"\s*(\$\{monitor_id:[^}]+\}|\d+|&&|\|\||!|\(|\))")
MAX_MONITORS = 10


@dataclass(frozen=True)
class Ref:
    key: str


@dataclass(frozen=True)
class Not:
    arg: Expr


@dataclass(frozen=True)
class Op:
    op: str  # "&&" or "||"
    left: Expr
    right: Expr


Expr = Ref | Not | Op


def parse(query: str) -> Expr:
    tokens = []
    at = 0
    while at < len(query.rstrip()):
        match = _TOKEN.match(query, at)
        if not match:
            raise Refused(f"cannot read the composite query from {query[at : at + 30]!r}")
        tokens.append(match.group(1))
        at = match.end()
    parser = _Parser(tokens)
    expr = parser.either()
    if parser.at < len(tokens):
        raise Refused(f"unexpected {tokens[parser.at]!r} in the composite query")
    if len(references(expr)) > MAX_MONITORS:
        raise Refused(f"a composite combines at most {MAX_MONITORS} monitors")
    return expr


def references(expr: Expr) -> tuple[str, ...]:
    if isinstance(expr, Ref):
        return (expr.key,)
    if isinstance(expr, Not):
        return references(expr.arg)
    return tuple(dict.fromkeys(references(expr.left) + references(expr.right)))


class _Parser:
    def __init__(self, tokens: list[str]) -> None:
        self.tokens = tokens
        self.at = 0

    def _next(self) -> str:
        if self.at >= len(self.tokens):
            raise Refused("the composite query ends too early")
        self.at += 1
        return self.tokens[self.at - 1]

    def either(self) -> Expr:
        node = self.both()
        while self.at < len(self.tokens) and self.tokens[self.at] == "||":
            self.at += 1
            node = Op("||", node, self.both())
        return node

    def both(self) -> Expr:
        node = self.single()
        while self.at < len(self.tokens) and self.tokens[self.at] == "&&":
            self.at += 1
            node = Op("&&", node, self.single())
        return node

    def single(self) -> Expr:
        word = self._next()
        if word == "!":
            return Not(self.single())
        if word == "(":
            node = self.either()
            if self._next() != ")":
                raise Refused("a parenthesis in the composite query is not closed")
            return node
        if word.startswith("${monitor_id:"):
            return Ref(word[len("${monitor_id:") : -1])
        if word.isdigit():
            return Ref(word)
        raise Refused(f"unexpected {word!r} in the composite query")


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
    key: str, body: Mapping[str, Any], constituents: Mapping[str, Run], duration: int, used: set[notes.Assumption]
) -> Run:
    expr = parse(str(body.get("query", "")))
    missing = [ref for ref in references(expr) if ref not in constituents]
    if missing:
        raise Refused(f"the composite refers to {missing[0]}, which this environment does not have")
    notify_no_data = bool((body.get("options") or {}).get("notify_no_data"))
    used.add(notes.COMPOSITE_LAG)
    steps = []
    state = OK
    for t in range(duration + 1):
        # U17: recomputed every minute from the states its monitors had a minute before.
        result = combine(expr, partial(_state, constituents, t - 1))
        if result == NO_DATA and not notify_no_data:
            steps.append(Step(t, state, note="NO DATA without notify_no_data: last state kept"))
            continue
        state = result
        steps.append(Step(t, state))
    return Run(key, tuple(steps), notify_no_data)
