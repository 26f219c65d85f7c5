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
from functools import cached_property

from sync.core import metric_query
from sync.core.evaluation.notes import Refused, Unmodelled
from sync.core.metric_query import BinOp, Call, Leaf, Node, Number

# Monitors whose value comes from an unpublished algorithm: there is no conservative reading of them.
_ALGORITHMS = {
    "forecast": "Datadog's forecast algorithm is not modelled",
    "anomalies": "Datadog's anomaly detection algorithm is not modelled",
    "outliers": "Datadog's outlier detection algorithm is not modelled",
}
_ALGORITHM = re.compile(r"\b(" + "|".join(_ALGORITHMS) + r")\s*\(")


@dataclass(frozen=True)
class Query:
    aggregator: str
    window: int  # minutes
    expression: Node
    comparator: str
    threshold: float
    unit: str = "m"  # the window's unit as written: it sets require_full_window's bucket size
    change: str = ""  # "change" or "pct_change" for a change alert: the expression is already its arithmetic

    # Cached: an evaluation reads them at every minute of every window, millions of times in `obs test`.
    @cached_property
    def leaves(self) -> tuple[Leaf, ...]:
        return leaves(self.expression)

    @cached_property
    def arithmetic(self) -> bool:
        return _has_binop(self.expression)

    @cached_property
    def as_count_path(self) -> bool:
        """Chosen by syntax alone: arithmetic plus any .as_count() time-aggregates each metric query first and then
        does the arithmetic (https://docs.datadoghq.com/monitors/guide/as-count-in-monitor-evaluations/)."""
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
    head, end = metric_query.head(text), metric_query.tail(text)
    if head is None or end is None or head.form == "forecast" or (head.shift is not None and head.shift.ago):
        raise Refused(f"not a metric monitor query the model knows: {text!r}")
    at, comparator, threshold = end
    body = text[head.end : at]
    if " by " in body or re.search(r"\}\s*by\s*\{", body):
        raise Refused("multi-alert queries (by {...}) are not modelled: obs emits simple alerts")
    try:
        expression = metric_query.expression(body)
    except metric_query.QueryError as exc:
        raise Refused(str(exc)) from None
    window = head.window
    query = Query(head.aggregator, window.minutes, expression, comparator, threshold, window.unit)
    return query if head.shift is None else _change(head.form, query, head.shift.minutes)


def _change(kind: str, inner: Query, minutes: int) -> Query:
    """The difference of the series now and N earlier, minute by minute, then the time aggregator over the window
    (https://docs.datadoghq.com/monitors/guide/change-alert/). As arithmetic it takes the paths any arithmetic takes."""
    if minutes <= 0:
        raise Refused("a change alert compares with a time before now: give a shift of at least a minute")
    now = inner.expression
    before = shifted(now, minutes)
    difference = BinOp("-", now, before)
    expression: Node = difference if kind == "change" else BinOp("*", BinOp("/", difference, before), Number(100))
    return Query(inner.aggregator, inner.window, expression, inner.comparator, inner.threshold, inner.unit, kind)


def shifted(node: Node, minutes: int) -> Node:
    """The expression with every metric query moved `minutes` back (timeshift)."""
    if isinstance(node, Leaf):
        return Leaf(node.space, node.metric, node.tags, node.modifier, node.shift + minutes)
    if isinstance(node, Call):
        return Call(node.name, shifted(node.arg, minutes), node.params)
    if isinstance(node, BinOp):
        return BinOp(node.op, shifted(node.left, minutes), shifted(node.right, minutes))
    return node
