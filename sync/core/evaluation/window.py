"""Pure: one evaluation of a metric query at minute `t`: the window's points reduced to one number.

The slice is [t - D - W, t - D] (https://docs.datadoghq.com/monitors/configuration/); whether its end is open
is U1, so the caller chooses the reading. The arithmetic: https://docs.datadoghq.com/monitors/types/metric/,
https://docs.datadoghq.com/monitors/guide/as-count-in-monitor-evaluations/ and
https://docs.datadoghq.com/monitors/guide/monitor-arithmetic-and-sparse-metrics/.
"""

from __future__ import annotations

import bisect
import itertools
import math
from collections.abc import Iterable, Mapping, Sequence
from typing import NamedTuple

from sync.core.evaluation.notes import Refused
from sync.core.evaluation.query import Query
from sync.core.evaluation.series import Series, is_count, matching, space_aggregate
from sync.core.metric_query import Call, Leaf, Node, Number

INTERPOLATE_MINUTES = 5  # gauges are interpolated linearly up to five minutes after a real sample
NAN = math.nan


class Outcome(NamedTuple):
    """What one evaluation saw: a value, an empty window, or a skipped evaluation (state kept). A tuple: a run
    makes one a minute, and a frozen dataclass takes several times as long to build."""

    start: int  # the window's first minute
    end: int  # its last minute
    value: float | None = None
    empty: bool = False
    skipped: str = ""  # why it was skipped
    points: int = 0


def window_bounds(query: Query, t: int, delay: int, open_end: bool) -> tuple[int, int]:
    end = t - delay - (1 if open_end else 0)
    return t - delay - query.window, end


def evaluate(
    query: Query,
    series: Sequence[Series],
    t: int,
    delay: int,
    open_end: bool,
    require_full: bool,
    seen_by: int | None = None,
) -> Outcome:
    """`seen_by`: the minute whose arrived points count, when it is not `t` (an SLO judging a past slice)."""
    return evaluate_fed(query, feeds(query, series), t, delay, open_end, require_full, seen_by)


def evaluate_fed(
    query: Query,
    fed: Mapping[Leaf, Feed],
    t: int,
    delay: int,
    open_end: bool,
    require_full: bool,
    seen_by: int | None = None,
    shortcuts: bool = True,
) -> Outcome:
    """`evaluate` on the query's leaves read once (`feeds`): a run evaluates the same series at every minute.
    `shortcuts=False` takes the general path everywhere: the one the shortcuts are tested equal to."""
    start, end = window_bounds(query, t, delay, open_end)
    seen = t if seen_by is None else seen_by
    columns: dict[Leaf, dict[int, float]] = {}
    values: list[float] = []
    aligned: dict[Leaf, list[float]] | None = None
    if isinstance(query.expression, Leaf):
        minutes, values = fed[query.expression].arrived(start, end, seen)  # what _at gives at each minute
    else:
        read = {leaf: fed[leaf].arrived(start, end, seen) for leaf in query.leaves}
        minutes = next((ms for ms, _ in read.values() if ms), [])
        if shortcuts and _aligned(query, read, minutes):
            # Every leaf has a point at the same minutes, or none in the window (nearly every window): each
            # column is its values in order, and the general path below would give exactly these, without a
            # dict or a lookup per minute.
            aligned = {leaf: vs for leaf, (_, vs) in read.items()}
        else:
            columns = {leaf: dict(zip(ms, vs, strict=True)) for leaf, (ms, vs) in read.items()}
            # A change alert compares the points the window holds now with theirs N earlier: its minutes are the
            # current series' (the earlier one has long arrived where the current one has not yet).
            current = [column for leaf, column in columns.items() if not (query.change and leaf.shift)]
            # A column holds its minutes in order: a lone one needs no merge.
            minutes = list(current[0]) if len(current) == 1 else sorted({m for column in current for m in column})
    if not minutes:
        return Outcome(start, end, empty=True)
    if require_full and not _full(query, minutes, start, end):
        return Outcome(start, end, skipped="the window is not full (require_full_window)", points=len(minutes))
    if query.as_count_path:
        return _as_count_path(query, aligned or columns, start, end, len(minutes))
    if aligned is not None:
        values = _over_aligned(query.expression, aligned, len(minutes))
    elif not isinstance(query.expression, Leaf):
        values = _over(query.expression, minutes, columns, len(query.leaves) > 1)
    if any(map(math.isnan, values)):
        nan = next(minute for minute, value in zip(minutes, values, strict=True) if math.isnan(value))
        # NaN anywhere in the arithmetic and the evaluation is skipped (the sparse-metrics arithmetic guide).
        return Outcome(start, end, skipped=f"no value at minute {nan} for a part of the formula", points=len(minutes))
    # .as_count() on a count metric forces the time aggregator to sum (Datadog's metric type modifiers page).
    single = query.leaves[0] if len(query.leaves) == 1 else None
    aggregator = "sum" if single is not None and is_count(single) else query.aggregator
    return Outcome(start, end, value=_time_aggregate(aggregator, values), points=len(values))


def _aligned(query: Query, read: Mapping[Leaf, tuple[list[int], list[float]]], minutes: list[int]) -> bool:
    """Whether every leaf read points at exactly these minutes or at none, and the minutes are those of a leaf the
    window's minutes come from (not only a change alert's earlier series)."""
    return all(ms == minutes or not ms for ms, _ in read.values()) and (
        not minutes or any(read[leaf][0] for leaf in query.leaves if not (query.change and leaf.shift))
    )


def _full(query: Query, minutes: list[int], start: int, end: int) -> bool:
    """full_window of a window's minutes (in order, all in [start, end]); one-minute buckets written out, as
    every evaluation of a run asks."""
    if query.unit == "m":
        return minutes[0] == start and (end - start + 1) - len(minutes) <= 3
    return full_window(query, set(minutes), start, end)


FeedCache = dict[tuple[object, ...], "Feed"]


def feeds(query: Query, series: Sequence[Series], cache: FeedCache | None = None) -> dict[Leaf, Feed]:
    """What each of the query's leaves reads, worked out once for a run of evaluations. `cache` shares a feed
    between the runs that read the same series objects the same way; it must not outlive those series (it
    knows them by identity)."""
    if cache is None:
        return {leaf: Feed(leaf, series) for leaf in query.leaves}
    out = {}
    for leaf in query.leaves:
        matched = matching(series, leaf)
        key = (leaf.space, leaf.shift, *map(id, matched))
        if key not in cache:
            cache[key] = Feed(leaf, matched)
        out[leaf] = cache[key]
    return out


class Feed:
    """A leaf's series, read once: per minute, when its last point arrives, the space aggregate of all its
    points, and each point with its arrival (Series.visible for every series at once). Every evaluation of a
    run reads every minute of its window, and nearly always all of a minute's points have arrived."""

    def __init__(self, leaf: Leaf, series: Sequence[Series]) -> None:
        self._space, self._shift = leaf.space, leaf.shift
        stamped: dict[int, list[tuple[int, float]]] = {}
        for s in matching(series, leaf):  # in series order: space_aggregate sums in that order
            for m, value in s.points.items():
                stamped.setdefault(m, []).append((s.arrival.get(m, m), value))
        self._minutes = {
            m: (max(a for a, _ in seen), space_aggregate(leaf.space, [v for _, v in seen]), tuple(seen))
            for m, seen in sorted(stamped.items())
        }
        # The same in minute order; `_by` holds, at each index, the latest arrival of any minute up to it.
        self._stamps = list(self._minutes)
        self._values = [full for _, full, _ in self._minutes.values()]
        self._by = list(itertools.accumulate((settled for settled, _, _ in self._minutes.values()), max))

    def __bool__(self) -> bool:
        """Whether any series feeds the leaf."""
        return bool(self._stamps)

    def arrived(self, start: int, end: int, t: int) -> tuple[list[int], list[float]]:
        """The window's minutes that have a point arrived by `t`, in order, and their space-aggregated points. A
        shifted leaf (a change alert's earlier series) reads the point `shift` minutes back."""
        stamps, shift = self._stamps, self._shift
        i = bisect.bisect_left(stamps, start - shift)
        j = bisect.bisect_right(stamps, end - shift)
        k = bisect.bisect_right(self._by, t, i, j)  # every minute before k has all its points
        minutes, values = stamps[i:k], self._values[i:k]
        for m in stamps[k:j]:
            seen = [value for arrival, value in self._minutes[m][2] if arrival <= t]
            if seen:
                minutes.append(m)
                values.append(space_aggregate(self._space, seen))
        return [m + shift for m in minutes] if shift else minutes, values


def _as_count_path(
    query: Query, columns: Mapping[Leaf, Mapping[int, float] | list[float]], start: int, end: int, n: int
) -> Outcome:
    if query.aggregator != "sum":
        # Datadog's as_count guide defines only sum on this path: the rest is refused, not guessed.
        raise Refused(
            f"{query.aggregator}() with .as_count() in arithmetic takes Datadog's as_count evaluation path, "
            "where only sum() is defined: the result cannot be predicted; use sum(), or drop .as_count()"
        )
    sums = {leaf: sum(_values(column)) if column or is_count(leaf) else NAN for leaf, column in columns.items()}
    value = _reduced(query.expression, sums)
    if math.isnan(value):
        return Outcome(start, end, skipped="a part of the formula has no points in the window", points=n)
    return Outcome(start, end, value=value, points=n)


def _reduced(node: Node, sums: dict[Leaf, float]) -> float:
    if isinstance(node, Leaf):
        return sums[node]
    if isinstance(node, Number):
        return node.value
    if isinstance(node, Call):
        return _functions(node, [_reduced(node.arg, sums)])[0]
    return _binops(node.op, [_reduced(node.left, sums)], [_reduced(node.right, sums)])[0]


def _values(column: Mapping[int, float] | list[float]) -> Iterable[float]:
    """A column's values in minute order."""
    return column if isinstance(column, list) else column.values()


def _over_aligned(node: Node, aligned: dict[Leaf, list[float]], n: int) -> list[float]:
    """`_over` where every leaf has a point at each of the n minutes or at none: no interpolation."""
    if isinstance(node, Number):
        return [node.value] * n
    if isinstance(node, Leaf):
        # A leaf without a point in the window is missing at every minute: 0 under .as_count(), else NaN.
        return aligned[node] or [0.0 if is_count(node) else NAN] * n
    if isinstance(node, Call):
        return _functions(node, _over_aligned(node.arg, aligned, n))
    return _binops(node.op, _over_aligned(node.left, aligned, n), _over_aligned(node.right, aligned, n))


def _over(node: Node, minutes: list[int], columns: dict[Leaf, dict[int, float]], align: bool) -> list[float]:
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
        return _functions(node, _over(node.arg, minutes, columns, align))
    left, right = _over(node.left, minutes, columns, align), _over(node.right, minutes, columns, align)
    return _binops(node.op, left, right)


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


def _time_aggregate(aggregator: str, values: list[float]) -> float:
    if aggregator == "sum":
        return sum(values)  # the values of the points, not their number
    if aggregator == "max":
        return max(values)
    if aggregator == "min":
        return min(values)
    return sum(values) / len(values)


def full_window(query: Query, outcome_minutes: set[int], start: int, end: int) -> bool:
    """Buckets of 1 minute for a window in minutes, 10 for hours, 60 for days; full when the oldest bucket holds a
    point and at most three buckets are empty (https://docs.datadoghq.com/monitors/types/metric/)."""
    size = {"m": 1, "h": 10, "d": 60}.get(query.unit, 240)
    buckets = [range(b, min(b + size, end + 1)) for b in range(start, end + 1, size)]
    filled = [any(m in outcome_minutes for m in bucket) for bucket in buckets]
    return bool(filled) and filled[0] and filled.count(False) <= 3
