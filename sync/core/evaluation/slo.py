"""Pure: burn-rate alerts on time-slice SLOs (https://docs.datadoghq.com/service_level_objectives/burn_rate/)."""

from __future__ import annotations

import bisect
import itertools
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from sync.core import durations
from sync.core.evaluation import notes
from sync.core.evaluation.feed import Feed, FeedCache, feeds
from sync.core.evaluation.monitor import breaches
from sync.core.evaluation.notes import Refused
from sync.core.evaluation.query import Query, parse
from sync.core.evaluation.series import Series, matching
from sync.core.evaluation.states import ALERT, FRESH, OK, WARN, Change, Run, Start, Step, recorded
from sync.core.evaluation.window import evaluate_fed
from sync.core.metric_query import Leaf

_BURN = re.compile(
    r'^\s*burn_rate\("([^"]+)"\)\.over\("(\d+)d"\)\.long_window\("(\d+)([mh])"\)'
    r'\.short_window\("(\d+)([mh])"\)\s*(>=|>)\s*(\d+(?:\.\d+)?)\s*$'
)
_SLO_REF = re.compile(r"^\$\{slo_id:([^}]+)\}$")


def run(
    key: str,
    body: Mapping[str, Any],
    slos: Mapping[str, Mapping[str, Any]],
    series: Sequence[Series],
    duration: int,
    used: set[notes.Assumption],
    corrections: Mapping[str, Sequence[tuple[int, int]]] | None = None,
    start: Start = FRESH,
    cache: FeedCache | None = None,
    verdicts: Verdicts | None = None,
) -> Run:
    """The burn-rate alert's state at each minute. `corrections` holds, per SLO key, the minutes a correction
    covers: a time-slice SLO counts them as uptime, so they burn no budget. `start`: its state before minute 0.
    `cache`: feeds shared with other runs on the same series (feed.feeds); `verdicts`: with it, the slices'
    verdicts, shared with the other alerts of the SLO (a fast and a slow burn read the same slices)."""
    query = str(body.get("query", ""))
    match = _BURN.match(query)
    if not match:
        raise Refused("only burn_rate(...) SLO alerts are modelled; error-budget alerts need the SLO's whole window")
    ref, _, long_n, long_u, short_n, short_u, comparator, _ = match.groups()
    long_window, short_window = durations.of(int(long_n), long_u), durations.of(int(short_n), short_u)
    if short_window >= long_window:
        raise Refused("the short window must be shorter than the long window")
    slo_name, spec, budget = _objective(ref, slos)
    interval = int(spec.get("query_interval_seconds") or 300) // 60
    # The slice value: the mean of the slice's points (T1); a slice without arrived points counts as up (U19).
    sliced = parse(f"avg(last_{interval}m):{_formula(spec)} > 0")
    thresholds: Mapping[str, float] = (body.get("options") or {}).get("thresholds") or {}
    critical = float(thresholds.get("critical", match.group(8)))
    warning = thresholds.get("warning")
    used.update({notes.SLO_LATE_DATA, notes.SLICE_MEAN})
    spans = tuple((corrections or {}).get(slo_name, ()))
    if spans:
        used.add(notes.CORRECTED_SLICE)
    count_long = long_window // interval
    grid = range(-count_long * interval, (duration // interval) * interval, interval)  # every slice a window reads
    slices = _Slices(sliced, series, interval, spec, spans, grid, cache, verdicts)

    def burn_rate(window: int, t: int) -> float:
        """The share of the window's complete slices that were down, over the share the budget allows."""
        count = window // interval
        last = (t // interval) * interval  # the end of the last complete slice
        down = slices.down(last - count * interval, last, t)
        return down / max(count, 1) / budget

    def walk(steps: list[Step] | None) -> tuple[Change, ...]:
        changes: list[Change] = []
        before = start.state
        for t in range(duration + 1):
            long_rate, short_rate = burn_rate(long_window, t), burn_rate(short_window, t)
            state = _state(long_rate, short_rate, critical, warning, comparator)
            if state != before:
                changes.append((t, before, state))
                before = state
            if steps is not None:
                rates = f"burn rate {long_rate:.2f} over {long_n}{long_u}, {short_rate:.2f} over {short_n}{short_u}"
                steps.append(Step(t, state, note=rates))
        return tuple(changes)

    return Run(key, walk(None), False, start, recorded(walk))


def _objective(ref: str, slos: Mapping[str, Mapping[str, Any]]) -> tuple[str, Mapping[str, Any], float]:
    """The SLO the alert burns (its key), its time-slice specification and its error budget (a fraction)."""
    slo_key = _SLO_REF.match(ref)
    slo_name = slo_key.group(1) if slo_key else ref
    slo = slos.get(slo_name)
    if slo is None:
        raise Refused(f"the SLO {ref} is not among this environment's SLOs")
    spec = (slo.get("sli_specification") or {}).get("time_slice")
    if slo.get("type") != "time_slice" or not spec:
        raise Refused("only time-slice SLOs are modelled (metric SLOs need count metrics the scenarios do not give)")
    target = float((slo.get("thresholds") or [{}])[0].get("target", 0))
    if not 0 < target < 100:
        raise Refused("the SLO has no target below 100%")
    return slo_name, spec, 1 - target / 100


def _formula(spec: Mapping[str, Any]) -> str:
    """The slice's formula with each named query written out."""
    formula = str(spec["query"]["formulas"][0]["formula"])
    for named in spec["query"]["queries"]:
        formula = re.sub(rf"\b{re.escape(named['name'])}\b", named["query"], formula)
    return formula


def _state(long_rate: float, short_rate: float, critical: float, warning: float | None, comparator: str) -> str:
    """Alert when both windows burn past critical; warn when both burn past the warning threshold."""
    if breaches(long_rate, critical, comparator) and breaches(short_rate, critical, comparator):
        return ALERT
    if warning is not None and all(breaches(r, float(warning), comparator) for r in (long_rate, short_rate)):
        return WARN
    return OK


def _corrected(start: int, interval: int, spans: Sequence[tuple[int, int]]) -> bool:
    """Whether a correction covers any minute of the slice [start, start + interval)."""
    return any(a < start + interval and start < b for a, b in spans)


@dataclass
class Judged:
    """What the alerts of an SLO share of its slices on the same series: each slice's verdict per count of its
    points arrived, and the arrival minutes of its points."""

    seen: dict[tuple[int, int], bool] = field(default_factory=dict)
    arrivals: dict[int, list[int]] = field(default_factory=dict)


Verdicts = dict[tuple[object, ...], Judged]  # per way of judging a slice


class _Slices:
    """How many slices of a window are down, as seen at minute `t`, each slice's verdict worked out once. A
    slice's verdict changes only as its points arrive, and arrived points stay (U2): the points arrived by `t`
    are the first n of the slice's points in order of arrival, so (slice, n) names what `t` sees. Every minute
    re-reads a long window's slices and most have long had all their points: those are counted from a running
    sum of their final verdicts, and only the slices from the first one still waiting for a point are judged at `t`."""

    def __init__(
        self,
        query: Query,
        series: Sequence[Series],
        interval: int,
        spec: Mapping[str, Any],
        spans: Sequence[tuple[int, int]],
        grid: range,
        cache: FeedCache | None,
        verdicts: Verdicts | None,
    ) -> None:
        self._query, self._interval, self._spec, self._grid = query, interval, spec, grid
        self._fed = feeds(query, series, cache)
        # What a slice's verdict depends on besides the slice and its points arrived: the feeds (shared, so known
        # by identity while `cache` keeps them) and how a slice is judged.
        judged_by = (str(query), spec["threshold"], spec["comparator"], *(id(f) for f in self._fed.values()))
        judged = Judged() if verdicts is None or cache is None else verdicts.setdefault(judged_by, Judged())
        self._seen = judged.seen
        read = [(leaf, matching(series, leaf)) for leaf in query.leaves]
        for start in grid:
            if start not in judged.arrivals:
                judged.arrivals[start] = sorted(
                    s.arrival.get(m, m)
                    for leaf, matched in read
                    for s in matched
                    for m in range(start - leaf.shift, start + interval - leaf.shift)
                    if m in s.points
                )
        self._arrivals = {start: judged.arrivals[start] for start in grid}
        # At each index of the grid, the minute by which that slice and every earlier one have all their points.
        self._by = list(
            itertools.accumulate((arrived[-1] if arrived else grid.start for arrived in self._arrivals.values()), max)
        )
        self._judged = {start: not _corrected(start, interval, spans) for start in grid}  # a corrected slice is up
        self._tail = (0, 0, -1, 0)  # the last (j, n, t, down) counted: the long and short windows share their tail
        self._settled = [0]  # running sum over the grid of the final verdicts that are down
        self._refused: dict[int, Refused] = {}  # grid index -> why the model cannot judge that slice
        for index, (start, arrived) in enumerate(self._arrivals.items()):
            down = False
            try:
                down = self._down(start, arrived[-1] if arrived else start)
            except Refused as exc:  # raised when a window reads the slice, as judging it there would
                self._refused[index] = exc
            self._settled.append(self._settled[-1] + down)

    def down(self, first: int, last: int, t: int) -> int:
        """How many slices starting in [first, last) are down as seen at `t`."""
        interval = self._interval
        i, n = (first - self._grid.start) // interval, (last - self._grid.start) // interval
        j = bisect.bisect_right(self._by, t, i, n)  # the slices before j have all their points by t
        cut = self._grid.start + j * interval
        refused = next((self._refused[k] for k in sorted(self._refused) if i <= k < j), None)
        if refused is not None:
            raise refused
        if self._tail[:3] != (j, n, t):
            self._tail = (j, n, t, sum(self._down(s, t) for s in range(cut, last, interval)))
        return self._settled[j] - self._settled[i] + self._tail[3]

    def _down(self, start: int, t: int) -> bool:
        """Down and not covered by a correction (a corrected slice counts as up, unjudged)."""
        return self._judged[start] and not self._up(start, t)

    def _up(self, start: int, t: int) -> bool:
        seen = (start, bisect.bisect_right(self._arrivals[start], t))
        if seen not in self._seen:
            self._seen[seen] = _up(self._query, self._fed, start, self._interval, t, self._spec)
        return self._seen[seen]


def _up(query: Query, fed: Mapping[Leaf, Feed], start: int, interval: int, t: int, spec: Mapping[str, Any]) -> bool:
    outcome = evaluate_fed(query, fed, start + interval, 0, True, False, seen_by=t)
    if outcome.value is None:
        return True  # missing data is always uptime in a time-slice SLO
    return breaches(outcome.value, float(spec["threshold"]), str(spec["comparator"]))
