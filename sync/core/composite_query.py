"""Pure: the grammar of a composite monitor's query, for the definitions' check, the expansion and the
evaluation model.

    either := both ("||" both)*;  both := single ("&&" single)*;  single := "!" single | "(" either ")" | operand

Operands differ by where the query is: a definition names metrics (`[[metric:name]]`), an expanded body holds
placeholders for monitors not yet created (`${monitor_id:env/queue/metric}`), and Datadog's own bodies hold
monitor IDs (`12345`). See https://docs.datadoghq.com/monitors/types/composite/ (the trigger conditions).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache

METRIC = "metric"  # [[metric:name]] in a definition
PLACEHOLDER = "placeholder"  # ${monitor_id:key} in an expanded body
ID = "id"  # a monitor ID in Datadog's body
_OPERANDS = {
    METRIC: r"\[\[\s*metric:\s*([^\[\]]*?)\s*\]\]",
    PLACEHOLDER: r"\$\{monitor_id:([^}]+)\}",
    ID: r"(\d+)",
}
_OPERATORS = r"&&|\|\||!|\(|\)"
MOST_MONITORS = 10  # "up to 10 individual monitors" per composite (the page above)


class CompositeError(ValueError):
    """The text is not a composite query of this grammar; the message says where it stops reading."""


@dataclass(frozen=True)
class Ref:
    key: str  # the metric's name, the placeholder's key or the monitor ID


@dataclass(frozen=True)
class Not:
    arg: Expr


@dataclass(frozen=True)
class Op:
    op: str  # "&&" or "||"
    left: Expr
    right: Expr


Expr = Ref | Not | Op


def parse(query: str, operands: tuple[str, ...]) -> Expr:
    """The query as a tree, reading only the operand forms named in `operands`."""
    tokens = _tokens(query, operands)
    parser = _Parser(tokens)
    expr = parser.either()
    if parser.at < len(tokens):
        raise CompositeError(f"unexpected {tokens[parser.at][1]!r} in the composite query")
    return expr


def references(expr: Expr) -> tuple[str, ...]:
    """The operands' keys, in order of first mention."""
    if isinstance(expr, Ref):
        return (expr.key,)
    if isinstance(expr, Not):
        return references(expr.arg)
    return tuple(dict.fromkeys(references(expr.left) + references(expr.right)))


def names(query: str, operand: str) -> list[str]:
    """The keys of one operand form found in the text, in order of first mention, whether or not it parses."""
    return list(dict.fromkeys(_operand(operand).findall(query)))


def substitute(query: str, operand: str, replace: Callable[[str], str]) -> str:
    """The text with each operand of one form replaced by `replace(key)`, everything else as written."""
    return _operand(operand).sub(lambda found: replace(found.group(1)), query)


@cache
def _operand(operand: str) -> re.Pattern[str]:
    return re.compile(_OPERANDS[operand])


@cache
def _token(operands: tuple[str, ...]) -> re.Pattern[str]:
    alternatives = "|".join(f"(?P<{name}>{_OPERANDS[name]})" for name in operands)
    return re.compile(rf"\s*(?:{alternatives}|(?P<op>{_OPERATORS}))")


def _tokens(query: str, operands: tuple[str, ...]) -> list[tuple[str, str]]:
    pattern, out, at = _token(operands), [], 0
    while at < len(query.rstrip()):
        match = pattern.match(query, at)
        if not match:
            raise CompositeError(f"cannot read the composite query from {query[at : at + 30]!r}")
        kind = match.lastgroup or ""
        out.append((kind, match.group(kind)))
        at = match.end()
    return out


class _Parser:
    def __init__(self, tokens: list[tuple[str, str]]) -> None:
        self.tokens = tokens
        self.at = 0

    def _next(self) -> tuple[str, str]:
        if self.at >= len(self.tokens):
            raise CompositeError("the composite query ends too early")
        self.at += 1
        return self.tokens[self.at - 1]

    def _at(self, op: str) -> bool:
        return self.at < len(self.tokens) and self.tokens[self.at] == ("op", op)

    def either(self) -> Expr:
        node = self.both()
        while self._at("||"):
            self.at += 1
            node = Op("||", node, self.both())
        return node

    def both(self) -> Expr:
        node = self.single()
        while self._at("&&"):
            self.at += 1
            node = Op("&&", node, self.single())
        return node

    def single(self) -> Expr:
        kind, word = self._next()
        if word == "!" and kind == "op":
            return Not(self.single())
        if word == "(" and kind == "op":
            node = self.either()
            if self._next() != ("op", ")"):
                raise CompositeError("a parenthesis in the composite query is not closed")
            return node
        if kind in _OPERANDS:
            found = _operand(kind).fullmatch(word)
            assert found is not None  # the token pattern only lets this shape through
            return Ref(found.group(1))
        raise CompositeError(f"unexpected {word!r} in the composite query")
