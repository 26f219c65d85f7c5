"""Pure: a metric query's formula over the minutes of a window, each metric query a column of values
(https://docs.datadoghq.com/monitors/guide/monitor-arithmetic-and-sparse-metrics/): NaN where a value is
missing, and NaN anywhere in a minute makes that minute NaN."""

from __future__ import annotations

import math

from sync.core.evaluation.series import is_count
from sync.core.metric_query import Call, Leaf, Node, Number

INTERPOLATE_MINUTES = 5  # gauges are interpolated linearly up to five minutes after a real sample
NAN = math.nan


def over_aligned(node: Node, aligned: dict[Leaf, list[float]], n: int) -> list[float]:
    """`over` where every leaf has a point at each of the n minutes or at none: no interpolation."""
    if isinstance(node, Number):
        return [node.value] * n
    if isinstance(node, Leaf):
        # A leaf without a point in the window is missing at every minute: 0 under .as_count(), else NaN.
        return aligned[node] or [0.0 if is_count(node) else NAN] * n
    if isinstance(node, Call):
        return _functions(node, over_aligned(node.arg, aligned, n))
    return _binops(node.op, over_aligned(node.left, aligned, n), over_aligned(node.right, aligned, n))


def over(node: Node, minutes: list[int], columns: dict[Leaf, dict[int, float]], align: bool) -> list[float]:
    """The expression's value at each of the minutes (the tree walked once for them all)."""
    if isinstance(node, Number):
        return [node.value] * len(minutes)
    if isinstance(node, Leaf):
        column = columns[node]
        # as_count returns 0 for missing values instead of NaN
        missing = 0.0 if is_count(node) else None
        return [
            column[m] if m in column else missing if missing is not None else _interpolated(column, m) if align else NAN
            for m in minutes
        ]
    if isinstance(node, Call):
        return _functions(node, over(node.arg, minutes, columns, align))
    left, right = over(node.left, minutes, columns, align), over(node.right, minutes, columns, align)
    return _binops(node.op, left, right)


def reduced(node: Node, sums: dict[Leaf, float]) -> float:
    """The expression on one number per leaf (the as_count path's time-aggregated metric queries)."""
    if isinstance(node, Leaf):
        return sums[node]
    if isinstance(node, Number):
        return node.value
    if isinstance(node, Call):
        return _functions(node, [reduced(node.arg, sums)])[0]
    return _binops(node.op, [reduced(node.left, sums)], [reduced(node.right, sums)])[0]


def _functions(node: Call, values: list[float]) -> list[float]:
    """The function at each value (clamp_min and clamp_max set any NaN to their threshold)."""
    isnan = math.isnan
    if node.name == "default_zero":
        return [0.0 if isnan(v) else v for v in values]
    if node.name == "abs":
        return [abs(v) for v in values]
    (bound,) = node.params
    if node.name == "clamp_min":
        return [bound if isnan(v) else max(v, bound) for v in values]
    return [bound if isnan(v) else min(v, bound) for v in values]


def _binops(op: str, left: list[float], right: list[float]) -> list[float]:
    """The operator on each pair: NaN when either is, and for a division by zero."""
    isnan, pairs = math.isnan, zip(left, right, strict=True)
    if op == "+":
        return [NAN if isnan(a) or isnan(b) else a + b for a, b in pairs]
    if op == "-":
        return [NAN if isnan(a) or isnan(b) else a - b for a, b in pairs]
    if op == "*":
        return [NAN if isnan(a) or isnan(b) else a * b for a, b in pairs]
    return [NAN if isnan(a) or isnan(b) else a / b if b else NAN for a, b in pairs]


def _interpolated(column: dict[int, float], minute: int) -> float:
    """Gauges are aligned by linear interpolation up to five minutes after a real sample, never beyond."""
    before = [m for m in column if minute - INTERPOLATE_MINUTES <= m < minute]
    after = [m for m in column if m > minute]
    if not before or not after:
        return NAN
    a, b = max(before), min(after)
    return column[a] + (column[b] - column[a]) * (minute - a) / (b - a)
