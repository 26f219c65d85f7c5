"""Pure: one evaluation of a metric query at minute `t`: the window's points reduced to one number.

The slice is [t - D - W, t - D] (https://docs.datadoghq.com/monitors/configuration/); whether its end is open
is U1, so the caller chooses the reading. The arithmetic: https://docs.datadoghq.com/monitors/types/metric/,
https://docs.datadoghq.com/monitors/guide/as-count-in-monitor-evaluations/ and
https://docs.datadoghq.com/monitors/guide/monitor-arithmetic-and-sparse-metrics/.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import NamedTuple

from sync.core.evaluation.arithmetic import NAN, over, over_aligned, reduced
from sync.core.evaluation.feed import Feed, Timeline, feeds
from sync.core.evaluation.notes import Refused
from sync.core.evaluation.query import Query
from sync.core.evaluation.series import Series, is_count
from sync.core.metric_query import Leaf


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


def timeline(query: Query, fed: Mapping[Leaf, Feed]) -> Timeline | None:
    """The leaves lined up once for a run, for a query with more than a lone metric query."""
    return None if isinstance(query.expression, Leaf) else Timeline(query, fed)


def evaluate_fed(
    query: Query,
    fed: Mapping[Leaf, Feed],
    t: int,
    delay: int,
    open_end: bool,
    require_full: bool,
    seen_by: int | None = None,
    shortcuts: bool = True,
    lined_up: Timeline | None = None,
) -> Outcome:
    """`evaluate` on the query's leaves read once (`feeds`): a run evaluates the same series at every minute.
    `lined_up`: the query's `timeline`, when the run has one. `shortcuts=False` takes the general path
    everywhere: the one the shortcuts are tested equal to."""
    start, end = window_bounds(query, t, delay, open_end)
    seen = t if seen_by is None else seen_by
    read = lined_up.read(start, end, seen) if lined_up is not None and shortcuts else None
    if lined_up is not None and read is not None:
        minutes = lined_up.minutes[read.a : read.b]
        refused = _unevaluated(query, minutes, start, end, require_full)
        if refused is not None:
            return refused
        if query.as_count_path:
            return _as_count_path(query, lined_up.points(read), start, end, len(minutes))
        return _reduced_over_time(query, minutes, lined_up.formula(read), start, end)
    columns: dict[Leaf, dict[int, float]] = {}
    values: list[float] = []
    aligned: dict[Leaf, list[float]] | None = None
    if isinstance(query.expression, Leaf):
        minutes, values = fed[query.expression].arrived(start, end, seen)  # what _at gives at each minute
    else:
        arrived = {leaf: fed[leaf].arrived(start, end, seen) for leaf in query.leaves}
        minutes = next((ms for ms, _ in arrived.values() if ms), [])
        if shortcuts and _aligned(query, arrived, minutes):
            # Every leaf has a point at the same minutes, or none in the window (most windows a timeline does not
            # serve): each column is its values in order, and the general path below would give exactly these,
            # without a dict or a lookup per minute.
            aligned = {leaf: vs for leaf, (_, vs) in arrived.items()}
        else:
            columns = {leaf: dict(zip(ms, vs, strict=True)) for leaf, (ms, vs) in arrived.items()}
            # A change alert compares the points the window holds now with theirs N earlier: its minutes are the
            # current series' (the earlier one has long arrived where the current one has not yet).
            current = [column for leaf, column in columns.items() if not (query.change and leaf.shift)]
            # A column holds its minutes in order: a lone one needs no merge.
            minutes = list(current[0]) if len(current) == 1 else sorted({m for column in current for m in column})
    refused = _unevaluated(query, minutes, start, end, require_full)
    if refused is not None:
        return refused
    if query.as_count_path:
        return _as_count_path(query, aligned or columns, start, end, len(minutes))
    if aligned is not None:
        values = over_aligned(query.expression, aligned, len(minutes))
    elif not isinstance(query.expression, Leaf):
        values = over(query.expression, minutes, columns, len(query.leaves) > 1)
    return _reduced_over_time(query, minutes, values, start, end)


def _unevaluated(query: Query, minutes: list[int], start: int, end: int, require_full: bool) -> Outcome | None:
    """An empty window, or one require_full_window skips."""
    if not minutes:
        return Outcome(start, end, empty=True)
    if require_full and not _full(query, minutes, start, end):
        return Outcome(start, end, skipped="the window is not full (require_full_window)", points=len(minutes))
    return None


def _reduced_over_time(query: Query, minutes: list[int], values: list[float], start: int, end: int) -> Outcome:
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
    value = reduced(query.expression, sums)
    if math.isnan(value):
        return Outcome(start, end, skipped="a part of the formula has no points in the window", points=n)
    return Outcome(start, end, value=value, points=n)


def _values(column: Mapping[int, float] | list[float]) -> Iterable[float]:
    """A column's values in minute order."""
    return column if isinstance(column, list) else column.values()


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
