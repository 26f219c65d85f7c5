"""Pure: parse the metric monitor queries obs emits into a tree the evaluator walks.

`time_aggr(last_N<m|h|d|w>): expression comparator threshold`, where the expression combines metric queries
(`space_aggr:metric{tag:value,...}` with an optional `.as_count()` / `.as_rate()`), numbers, `+ - * /`,
parentheses and the functions `clamp_min`, `clamp_max`, `default_zero` and `abs`; and change alerts,
`change(time_aggr(last_W),last_N):expression ...` and `pct_change(...)`, read as the arithmetic the change-alert
guide reconstructs them with: `a - timeshift(a, -N)` and `(a - timeshift(a, -N)) / timeshift(a, -N) * 100`.

Forecast, anomaly and outlier monitors run algorithms Datadog does not publish: `Unmodelled`, not a guess.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from sync.core import durations
from sync.core.evaluation.notes import Refused, Unmodelled

AGGREGATORS = ("avg", "max", "min", "sum")
COMPARATORS = (">=", "<=", ">", "<")
FUNCTIONS = ("clamp_min", "clamp_max", "default_zero", "abs")

_CHANGE = re.compile(
    r"^\s*(change|pct_change)\((avg|max|min|sum)\(last_(\d+)([mhdw])\),\s*last_(\d+)([mhdw])\):(.*)$", re.S
)
# Monitors whose value comes from an unpublished algorithm: the reference gives no conservative reading of them.
_ALGORITHMS = {
    "forecast": "Datadog's forecast algorithm is not modelled",
    "anomalies": "Datadog's anomaly detection algorithm is not modelled",
    "outliers": "Datadog's outlier detection algorithm is not modelled",
}
_ALGORITHM = re.compile(r"\b(" + "|".join(_ALGORITHMS) + r")\s*\(")
_HEAD = re.compile(r"^\s*(avg|max|min|sum)\(last_(\d+)([mhdw])\):(.*?)\s*(>=|<=|>|<)\s*(-?\d+(?:\.\d+)?)\s*$", re.S)
_TOKEN = re.compile(
    r"\s*(?:(?P<metric>(?:avg|max|min|sum):[A-Za-z_][\w.]*\{[^}]*\}(?:\.as_count\(\)|\.as_rate\(\))?)"
    r"|(?P<number>\d+(?:\.\d+)?)|(?P<name>[a-z_]+)(?=\()|(?P<op>[-+*/(),]))"
)
_METRIC = re.compile(r"^(avg|max|min|sum):([A-Za-z_][\w.]*)\{([^}]*)\}(\.as_count\(\)|\.as_rate\(\))?$")


@dataclass(frozen=True)
class Leaf:
    """One metric query: the series of `metric` whose tags include `tags`, merged by `space`."""

    space: str
    metric: str
    tags: tuple[tuple[str, str], ...]
    modifier: str  # "", "as_count" or "as_rate"
    shift: int = 0  # minutes back (timeshift): the value at minute m is the series' point at m - shift


@dataclass(frozen=True)
class Number:
    value: float


@dataclass(frozen=True)
class Call:
    name: str
    arg: Node
    params: tuple[float, ...]


@dataclass(frozen=True)
class BinOp:
    op: str
    left: Node
    right: Node


Node = Leaf | Number | Call | BinOp


@dataclass(frozen=True)
class Query:
    aggregator: str
    window: int  # minutes
    expression: Node
    comparator: str
    threshold: float
    unit: str = "m"  # the window's unit as written: it sets require_full_window's bucket size
    change: str = ""  # "change" or "pct_change" for a change alert: the expression is already its arithmetic

    @property
    def leaves(self) -> tuple[Leaf, ...]:
        return leaves(self.expression)

    @property
    def arithmetic(self) -> bool:
        return _has_binop(self.expression)

    @property
    def as_count_path(self) -> bool:
        """Section "The as_count() / as_rate() evaluation path": chosen by syntax alone, arithmetic plus any
        .as_count() time-aggregates each metric query first and then does the arithmetic."""
        return self.arithmetic and any(leaf.modifier == "as_count" for leaf in self.leaves)


def leaves(node: Node) -> tuple[Leaf, ...]:
    if isinstance(node, Leaf):
        return (node,)
    if isinstance(node, Call):
        return leaves(node.arg)
    if isinstance(node, BinOp):
        return leaves(node.left) + leaves(node.right)
    return ()


def _has_binop(node: Node) -> bool:
    if isinstance(node, BinOp):
        return True
    return isinstance(node, Call) and _has_binop(node.arg)


def parse(text: str) -> Query:
    algorithm = _ALGORITHM.search(text)
    if algorithm:
        name = algorithm.group(1)
        raise Unmodelled(f"{name}: {_ALGORITHMS[name]}")
    change = _CHANGE.match(text)
    if change:
        return _change(*change.groups())
    head = _HEAD.match(text)
    if not head:
        raise Refused(f"not a metric monitor query the model knows: {text!r}")
    aggregator, count, unit, body, comparator, threshold = head.groups()
    if " by " in body or re.search(r"\}\s*by\s*\{", body):
        raise Refused("multi-alert queries (by {...}) are not modelled: obs emits simple alerts")
    tokens = _tokens(body)
    parser = _Parser(tokens)
    expression = parser.expression()
    if parser.at < len(tokens):
        raise Refused(f"unexpected {tokens[parser.at][1]!r} in the query")
    return Query(aggregator, durations.of(int(count), unit), expression, comparator, float(threshold), unit)


def _change(kind: str, aggregator: str, count: str, unit: str, shift: str, shift_unit: str, rest: str) -> Query:
    """Section "Change alerts" of the guide: the difference of the series now and N earlier, minute by minute,
    then the time aggregator over the window. As arithmetic it takes the paths any arithmetic takes."""
    inner = parse(f"{aggregator}(last_{count}{unit}):{rest}")
    minutes = durations.of(int(shift), shift_unit)
    if minutes <= 0:
        raise Refused("a change alert compares with a time before now: give a shift of at least a minute")
    now = inner.expression
    before = shifted(now, minutes)
    difference = BinOp("-", now, before)
    expression: Node = difference if kind == "change" else BinOp("*", BinOp("/", difference, before), Number(100))
    return Query(aggregator, inner.window, expression, inner.comparator, inner.threshold, inner.unit, kind)


def shifted(node: Node, minutes: int) -> Node:
    """The expression with every metric query moved `minutes` back (timeshift)."""
    if isinstance(node, Leaf):
        return Leaf(node.space, node.metric, node.tags, node.modifier, node.shift + minutes)
    if isinstance(node, Call):
        return Call(node.name, shifted(node.arg, minutes), node.params)
    if isinstance(node, BinOp):
        return BinOp(node.op, shifted(node.left, minutes), shifted(node.right, minutes))
    return node


def _tokens(body: str) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    at = 0
    while at < len(body.rstrip()):
        match = _TOKEN.match(body, at)
        if not match or match.end() == at:
            raise Refused(f"cannot read the query from {body[at : at + 30]!r}")
        kind = match.lastgroup or ""
        out.append((kind, match.group(kind)))
        at = match.end()
    return out


class _Parser:
    def __init__(self, tokens: list[tuple[str, str]]) -> None:
        self.tokens = tokens
        self.at = 0

    def _peek(self) -> str | None:
        return self.tokens[self.at][1] if self.at < len(self.tokens) else None

    def _take(self, expected: str | None = None) -> tuple[str, str]:
        if self.at >= len(self.tokens):
            raise Refused("the query ends too early")
        token = self.tokens[self.at]
        if expected is not None and token[1] != expected:
            raise Refused(f"expected {expected!r}, found {token[1]!r}")
        self.at += 1
        return token

    def expression(self) -> Node:
        node = self.term()
        while self._peek() in ("+", "-"):
            op = self._take()[1]
            node = BinOp(op, node, self.term())
        return node

    def term(self) -> Node:
        node = self.factor()
        while self._peek() in ("*", "/"):
            op = self._take()[1]
            node = BinOp(op, node, self.factor())
        return node

    def factor(self) -> Node:
        kind, text = self._take()
        if text == "(":
            node = self.expression()
            self._take(")")
            return node
        if kind == "number":
            return Number(float(text))
        if text == "-":
            return BinOp("-", Number(0), self.factor())
        if kind == "metric":
            return _leaf(text)
        if kind == "name":
            if text not in FUNCTIONS:
                raise Refused(f"the function {text}() is not modelled")
            self._take("(")
            arg = self.expression()
            params: list[float] = []
            while self._peek() == ",":
                self._take(",")
                number_kind, number = self._take()
                if number_kind != "number":
                    raise Refused(f"{text}() takes a number after its series, not {number!r}")
                params.append(float(number))
            self._take(")")
            if text in ("clamp_min", "clamp_max") and len(params) != 1:
                raise Refused(f"{text}() takes one number")
            return Call(text, arg, tuple(params))
        raise Refused(f"unexpected {text!r} in the query")


def _leaf(text: str) -> Leaf:
    match = _METRIC.match(text)
    assert match is not None  # the token pattern only lets this shape through
    space, metric, tags, modifier = match.groups()
    pairs = []
    for part in (p.strip() for p in tags.split(",")):
        if not part or part == "*":
            continue
        key, sep, value = part.partition(":")
        if not sep or "*" in value or part.startswith("!"):
            raise Refused(f"the tag filter {part!r} is not modelled: use key:value filters")
        pairs.append((key, value))
    return Leaf(space, metric, tuple(sorted(pairs)), (modifier or "").strip(".()"))
