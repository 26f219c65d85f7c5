"""Pure: what a run of evaluations reads, worked out once for all its minutes: each leaf's series (`Feed`), and
an arithmetic query's value at every minute (`Timeline`)."""

from __future__ import annotations

import bisect
import itertools
from collections.abc import Mapping, Sequence
from typing import NamedTuple

from sync.core.evaluation.arithmetic import NAN, over_aligned
from sync.core.evaluation.query import Query
from sync.core.evaluation.series import Series, matching, space_aggregate
from sync.core.metric_query import Leaf

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
        self._space, self.shift = leaf.space, leaf.shift
        matched = matching(series, leaf)
        # Per minute in order: its points with their arrivals, in series order (space_aggregate sums in that order).
        self._points: dict[int, tuple[tuple[int, float], ...]]
        if len(matched) == 1:  # nearly always: each minute's point is its only one, and its arrival the minute's
            ((arrival, points),) = ((s.arrival, s.points) for s in matched)
            self.stamps = sorted(points)
            settled = earliest = [arrival.get(m, m) for m in self.stamps]
            self.values = [space_aggregate(self._space, [points[m]]) for m in self.stamps]
            self._points = {m: ((a, points[m]),) for m, a in zip(self.stamps, settled, strict=True)}
        else:
            stamped: dict[int, list[tuple[int, float]]] = {}
            for s in matched:
                for m, value in s.points.items():
                    stamped.setdefault(m, []).append((s.arrival.get(m, m), value))
            self._points = {m: tuple(seen) for m, seen in sorted(stamped.items())}
            self.stamps = list(self._points)
            self.values = [space_aggregate(self._space, [v for _, v in seen]) for seen in self._points.values()]
            settled = [max(a for a, _ in seen) for seen in self._points.values()]
            earliest = [min(a for a, _ in seen) for seen in self._points.values()]
        # `_by` holds, at each index, the latest arrival of any minute up to it; `_first`, the earliest arrival
        # of any point of that minute or a later one.
        self._by = list(itertools.accumulate(settled, max))
        self._first = list(itertools.accumulate(reversed(earliest), min))[::-1]
        self._changes: dict[int, list[int]] = {}

    def __bool__(self) -> bool:
        """Whether any series feeds the leaf."""
        return bool(self.stamps)

    def span(self, start: int, end: int, t: int) -> tuple[int, int, int]:
        """(i, j, k): the window's minutes are stamps[i:j] (a shifted leaf reads `shift` minutes back), and
        every minute before k has all its points by `t`."""
        i = bisect.bisect_left(self.stamps, start - self.shift)
        j = bisect.bisect_right(self.stamps, end - self.shift)
        return i, j, bisect.bisect_right(self._by, t, i, j)

    def settled(self, start: int, end: int, t: int) -> tuple[int, int] | None:
        """(i, k) when what has arrived of the window by `t` is the minutes stamps[i:k], each with all its points,
        and nothing of a later minute (nearly always: points arrive in the order of their minutes); else None."""
        i, j, k = self.span(start, end, t)
        return None if k < j and self._first[k] <= t else (i, k)

    def changes(self, lead: int) -> list[int]:
        """The minutes (as the window reads them: shifted) that differ from the minute before in what a window can
        hold of them: their points' values, or how much later than `lead` minutes after the minute each arrives
        (a point a window holds from its first evaluation on is the same however soon it came), or whether they
        have a point at all. Worked out once per lead: the runs that share a feed mostly share their delay."""
        if lead not in self._changes:
            self._changes[lead] = self._changed(lead)
        return self._changes[lead]

    def _changed(self, lead: int) -> list[int]:
        out: list[int] = []
        before, last = None, None
        for stamp, seen in self._points.items():
            m = stamp + self.shift
            held = tuple((max(arrival - m - lead, 0), value) for arrival, value in seen)
            if last != m - 1:
                if last is not None:
                    out.append(last + 1)  # no point after `last`
                out.append(m)
            elif held != before:
                out.append(m)
            before, last = held, m
        if last is not None:
            out.append(last + 1)
        return out

    def arrived(self, start: int, end: int, t: int) -> tuple[list[int], list[float]]:
        """The window's minutes that have a point arrived by `t`, in order, and their space-aggregated points. A
        shifted leaf (a change alert's earlier series) reads the point `shift` minutes back."""
        stamps, shift = self.stamps, self.shift
        i, j, k = self.span(start, end, t)
        minutes, values = stamps[i:k], self.values[i:k]
        for m in stamps[k:j]:
            seen = [value for arrival, value in self._points[m] if arrival <= t]
            if seen:
                minutes.append(m)
                values.append(space_aggregate(self._space, seen))
        return [m + shift for m in minutes] if shift else minutes, values


def moved(query: Query, fed: Mapping[Leaf, Feed], delay: int, open_end: bool, duration: int) -> bytes:
    """At each minute up to `duration`, 1 where an evaluation may not read what the minute before read moved on a
    minute, and 0 where it does: it then gives what the last one gave (nothing in an evaluation depends on where
    the window is, only on what it holds), so a run reuses that outcome. A scenario's series hold their values,
    and their delays, for long stretches: most minutes of a run are 0.

    The window at t holds the minutes [t - delay - window, t - delay - open_end], each with its points arrived by
    t. It holds what the one before held, moved, unless one of those minutes differs from the minute before it
    (`Feed.changes`)."""
    out = bytearray(duration + 1)
    out[0] = 1  # the first evaluation has none before it
    lead = delay + (1 if open_end else 0)  # from a minute to the first evaluation whose window holds it
    for feed in fed.values():
        for c in feed.changes(lead):
            # Minute c is in the window from t = c + lead until it leaves at t = c + delay + window + 1.
            first, last = max(c + lead, 0), min(c + delay + query.window, duration)
            if first <= last:
                out[first : last + 1] = b"\x01" * (last - first + 1)
    return bytes(out)


class Read(NamedTuple):
    """What a window has read of a timeline: its minutes are the timeline's [a:b], and each leaf's points are
    those of its feed's minutes [i:k] (i == k: none)."""

    a: int
    b: int
    spans: tuple[tuple[int, int], ...]


class Timeline:
    """A query's leaves lined up on every minute any of them has a point, worked out once for a run, and its
    formula there (per set of leaves that have points). A window where every leaf has all the points of the same
    minutes arrived, or none, and nothing more (nearly every window) reads a slice of it: what the aligned path
    of an evaluation gives, without a column per leaf and the formula at every minute of every window."""

    def __init__(self, query: Query, fed: Mapping[Leaf, Feed]) -> None:
        self._expression, self._leaves = query.expression, query.leaves
        self._feeds = [fed[leaf] for leaf in self._leaves]
        # A change alert's window takes its minutes from the current series, not the earlier one.
        self._current = [not (query.change and leaf.shift) for leaf in self._leaves]
        self.minutes = sorted({m + feed.shift for feed in self._feeds for m in feed.stamps})
        index = {m: i for i, m in enumerate(self.minutes)}
        # Where each leaf's minutes sit in self.minutes, and its values there (NaN where it has none: no
        # window this serves reads those).
        self._positions = [[index[m + feed.shift] for m in feed.stamps] for feed in self._feeds]
        self._columns = []
        for feed, positions in zip(self._feeds, self._positions, strict=True):
            column = [NAN] * len(self.minutes)
            for position, value in zip(positions, feed.values, strict=True):
                column[position] = value
            self._columns.append(column)
        self._formula: dict[tuple[bool, ...], list[float]] = {}  # which leaves have points -> the formula

    def read(self, start: int, end: int, t: int) -> Read | None:
        """What the window [start, end] has read by `t`, or None when it is not a slice of the timeline."""
        spans, span = [], (0, 0)
        for feed, positions in zip(self._feeds, self._positions, strict=True):
            read = feed.settled(start, end, t)
            if read is None:
                return None
            i, k = read
            if k > i:
                here = positions[i], positions[k - 1] + 1
                # The leaf has a point at each minute of that slice only if it has as many points as it has minutes.
                if here[1] - here[0] != k - i or span not in ((0, 0), here):
                    return None
                span = here
            spans.append(read)
        if span != (0, 0) and not any(k > i for (i, k), current in zip(spans, self._current, strict=True) if current):
            return None  # only a change alert's earlier series has points: the general path finds no minutes
        return Read(*span, tuple(spans))

    def formula(self, read: Read) -> list[float]:
        """The formula at each of the read's minutes."""
        key = tuple(k > i for i, k in read.spans)
        if key not in self._formula:
            columns = zip(self._leaves, self._columns, key, strict=True)
            aligned = {leaf: column if present else [] for leaf, column, present in columns}
            self._formula[key] = over_aligned(self._expression, aligned, len(self.minutes))
        return self._formula[key][read.a : read.b]

    def points(self, read: Read) -> dict[Leaf, list[float]]:
        """Each leaf's points of the window, in minute order."""
        return {
            leaf: feed.values[i:k] for leaf, feed, (i, k) in zip(self._leaves, self._feeds, read.spans, strict=True)
        }
