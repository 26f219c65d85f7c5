"""Pure: the grammar of a classic Datadog metric monitor query, read into one tree for the definitions' check,
the evaluation model and the preview.

    query      := head ":" expression " " comparator number
    head       := time_aggr "(" "last_" N unit ")"
                | ("change" | "pct_change") "(" time_aggr "(" "last_" N unit ")," ("last_" N unit | N unit "_ago") ")"
                | time_aggr "(" "next_" N unit ")"          (a forecast: the expression starts with `forecast(`)
    time_aggr  := avg | sum | max | min;  unit := m | h | d | w;  comparator := >= | <= | > | <

Expressions combine metric queries (`space_aggr:metric{tag:value,...}` with an optional `.as_count()` or
`.as_rate()`), numbers, `+ - * /`, parentheses and functions; `expression` reads the subset the evaluation
models. See https://docs.datadoghq.com/monitors/types/metric/ and
https://docs.datadoghq.com/api/latest/monitors/#create-a-monitor (the query's forms).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from sync.core import durations

AGGREGATORS = ("avg", "max", "min", "sum")
COMPARATORS = (">=", "<=", ">", "<")
FUNCTIONS = ("clamp_min", "clamp_max", "default_zero", "abs")

_WINDOW = r"_(\d+)([mhdw])"
_MONITOR = re.compile(rf"^(avg|sum|max|min)\((last){_WINDOW}\):")
_CHANGE = re.compile(
    rf"^(change|pct_change)\((avg|sum|max|min)\(last{_WINDOW}\),\s*(?:last{_WINDOW}|(\d+)([mhd])_ago)\):"
)
_FORECAST = re.compile(rf"^(avg|max|min)\((next){_WINDOW}\):(?=forecast\()")
_TAIL = re.compile(r"\s(>=|<=|>|<)\s*(-?\d+(?:\.\d+)?)$")
# A tag filter holds no brackets (tags cannot), so what the expression reads has balanced brackets.
_TOKEN = re.compile(
    r"\s*(?:(?P<metric>(?:avg|max|min|sum):[A-Za-z_][\w.]*\{[^{}()\[\]]*\}(?:\.as_count\(\)|\.as_rate\(\))?)"
    r"|(?P<number>\d+(?:\.\d+)?)|(?P<name>[a-z_]+)(?=\()|(?P<op>[-+*/(),]))"
)
_METRIC = re.compile(r"^(avg|max|min|sum):([A-Za-z_][\w.]*)\{([^}]*)\}(\.as_count\(\)|\.as_rate\(\))?$")


class QueryError(ValueError):
    """The text is not a query of this grammar; the message says where it stops reading."""


@dataclass(frozen=True)
class Window:
    count: int
    unit: str  # m, h, d or w, as written: the evaluation's bucket size follows it
    ago: bool = False  # `5m_ago` (a change alert's shift) rather than `last_5m`

    @property
    def minutes(self) -> int:
        return durations.of(self.count, self.unit)


@dataclass(frozen=True)
class Head:
    """What precedes the expression: the form ("" for a plain monitor, "change", "pct_change" or "forecast"),
    the time aggregator, its window and, for a change alert, how far back it compares."""

    form: str
    aggregator: str
    window: Window
    shift: Window | None
    end: int  # where the expression starts in the text


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


def head(text: str) -> Head | None:
    """The query's head, read from the first character; None when it has none of the three forms."""
    found = _MONITOR.match(text) or _FORECAST.match(text)
    if found:
        aggregator, word, count, unit = found.groups()
        form = "" if word == "last" else "forecast"
        return Head(form, aggregator, Window(int(count), unit), None, found.end())
    found = _CHANGE.match(text)
    if not found:
        return None
    form, aggregator, count, unit, last_count, last_unit, ago_count, ago_unit = found.groups()
    shift = Window(int(last_count), last_unit) if last_count else Window(int(ago_count), ago_unit, ago=True)
    return Head(form, aggregator, Window(int(count), unit), shift, found.end())


def tail(text: str) -> tuple[int, str, float] | None:
    """Where the comparator's space starts, the comparator and the threshold; None without a tail."""
    found = _TAIL.search(text)
    return (found.start(), found.group(1), float(found.group(2))) if found else None


def expression(body: str) -> Node:
    """The expression as a tree, for the functions the evaluation models."""
    tokens = _tokens(body)
    parser = _Parser(tokens)
    node = parser.expression()
    if parser.at < len(tokens):
        raise QueryError(f"unexpected {tokens[parser.at][1]!r} in the query")
    return node


def _tokens(body: str) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    at = 0
    while at < len(body.rstrip()):
        match = _TOKEN.match(body, at)
        if not match or match.end() == at:
            raise QueryError(f"cannot read the query from {body[at : at + 30]!r}")
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
            raise QueryError("the query ends too early")
        token = self.tokens[self.at]
        if expected is not None and token[1] != expected:
            raise QueryError(f"expected {expected!r}, found {token[1]!r}")
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
            return self.call(text)
        raise QueryError(f"unexpected {text!r} in the query")

    def call(self, name: str) -> Call:
        if name not in FUNCTIONS:
            raise QueryError(f"the function {name}() is not modelled")
        self._take("(")
        arg = self.expression()
        params: list[float] = []
        while self._peek() == ",":
            self._take(",")
            number_kind, number = self._take()
            if number_kind != "number":
                raise QueryError(f"{name}() takes a number after its series, not {number!r}")
            params.append(float(number))
        self._take(")")
        if name in ("clamp_min", "clamp_max") and len(params) != 1:
            raise QueryError(f"{name}() takes one number")
        return Call(name, arg, tuple(params))


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
            raise QueryError(f"the tag filter {part!r} is not modelled: use key:value filters")
        pairs.append((key, value))
    return Leaf(space, metric, tuple(sorted(pairs)), (modifier or "").strip(".()"))
