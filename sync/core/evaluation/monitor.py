"""Pure: a metric monitor's state machine, minute by minute: thresholds and recovery, no data and auto-resolve
(https://docs.datadoghq.com/monitors/configuration/, https://docs.datadoghq.com/monitors/guide/recovery-thresholds/)."""

from __future__ import annotations

import math
import operator
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property, partial
from typing import Any

from sync.core.evaluation import notes
from sync.core.evaluation.feed import Feed, FeedCache, feeds, moved
from sync.core.evaluation.notes import Refused
from sync.core.evaluation.query import Query, parse
from sync.core.evaluation.series import Series, is_count, matching
from sync.core.evaluation.states import ALERT, FRESH, NO_DATA, OK, WARN, Change, Run, Start, Step, recorded
from sync.core.evaluation.window import Outcome, evaluate_fed, timeline, window_bounds
from sync.core.metric_query import Call, Leaf, Node

_SQS_COUNTERS = "aws.sqs.number_of_messages"
ON_MISSING_DATA = ("default", "show_no_data", "show_and_notify_no_data", "resolve")


@dataclass(frozen=True)
class Settings:
    """What of a monitor body decides its evaluation."""

    query: Query
    delay: int  # minutes
    require_full_window: bool
    critical: float
    warning: float | None
    critical_recovery: float | None
    warning_recovery: float | None
    notify_no_data: bool
    no_data_timeframe: int  # minutes
    timeout: int | None  # minutes
    on_missing_data: str | None

    @cached_property
    def counts(self) -> bool:
        """Whether a leaf is a count: where an empty window might mean 0."""
        return any(is_count(leaf) for leaf in self.query.leaves)

    @cached_property
    def zero_when_empty(self) -> bool:
        """on_missing_data "default" evaluates an empty window of a count query as 0."""
        return _count_query(self.query.expression) and all(is_count(leaf) for leaf in self.query.leaves)

    @property
    def cadence(self) -> int:
        """Every minute under 24 h, then every 10 or 30 minutes (https://docs.datadoghq.com/monitors/configuration/)."""
        return 1 if self.query.window < 1440 else 10 if self.query.window < 2880 else 30


def settings(body: Mapping[str, Any], used: set[notes.Assumption]) -> Settings:
    if body.get("type") not in ("metric alert", "query alert"):
        raise Refused(f"monitors of type {body.get('type')!r} are not modelled")
    query = parse(str(body.get("query", "")))
    options: Mapping[str, Any] = body.get("options") or {}
    if "require_full_window" not in options:
        # U12: its default differs between documentation revisions and providers, so there is no safe reading.
        raise Refused("the monitor omits require_full_window, whose default Datadog documents both ways; set it")
    thresholds: Mapping[str, float] = options.get("thresholds") or {}
    if "critical" not in thresholds:
        raise Refused("the monitor has no critical threshold")
    if query.change:
        used.add(notes.CHANGE_ALIGNMENT)
    if any(leaf.modifier == "as_count" and leaf.metric.startswith(_SQS_COUNTERS) for leaf in query.leaves):
        used.add(notes.SQS_COUNTERS_GAUGES)
    window = query.window
    timeframe = options.get("no_data_timeframe")
    if options.get("notify_no_data") and timeframe is None:
        used.add(notes.NO_DATA_TIMEFRAME)
    timeout_h = options.get("timeout_h")
    if timeout_h:
        used.add(notes.TIMEOUT_CLOCK)
    missing = options.get("on_missing_data")
    if missing is not None and missing not in ON_MISSING_DATA:
        raise Refused(f"on_missing_data {missing!r} is not one Datadog defines")
    return Settings(
        query=query,
        delay=delay_minutes(options),
        require_full_window=bool(options["require_full_window"]),
        critical=float(thresholds["critical"]),
        warning=_number(thresholds.get("warning")),
        critical_recovery=_number(thresholds.get("critical_recovery")),
        warning_recovery=_number(thresholds.get("warning_recovery")),
        notify_no_data=bool(options.get("notify_no_data")) if missing is None else missing == "show_and_notify_no_data",
        no_data_timeframe=int(timeframe) if timeframe else 2 * window,
        timeout=int(timeout_h * 60) if timeout_h else None,
        on_missing_data=missing,
    )


def delay_minutes(options: Mapping[str, Any]) -> int:
    """evaluation_delay, in whole minutes of the scenario."""
    return math.ceil(int(options.get("evaluation_delay") or 0) / 60)


def _number(value: Any) -> float | None:
    return None if value is None else float(value)


_Compare = Callable[[float, float], bool]
_COMPARED: dict[str, _Compare] = {">": operator.gt, ">=": operator.ge, "<": operator.lt, "<=": operator.le}
# `>` recovers at <=, `>=` below, `<` at >=, `<=` above: https://docs.datadoghq.com/monitors/guide/recovery-thresholds/
_RECOVERED: dict[str, _Compare] = {">": operator.le, ">=": operator.lt, "<": operator.ge, "<=": operator.gt}


def breaches(value: float, threshold: float, comparator: str) -> bool:
    return _COMPARED[comparator](value, threshold)


def recovered(value: float, threshold: float, comparator: str) -> bool:
    return _RECOVERED[comparator](value, threshold)


def classify(s: Settings, value: float, before: str, used: set[notes.Assumption]) -> str:
    """Steps 3-6 of the evaluator ordering: critical, the critical recovery gate, warning, its gate, OK."""
    comparator = s.query.comparator
    if breaches(value, s.critical, comparator):
        return ALERT
    if before == ALERT and s.critical_recovery is not None:
        if not recovered(value, s.critical_recovery, comparator):
            return ALERT
        used.add(notes.RECOVERY_LANDING)
    if s.warning is not None and breaches(value, s.warning, comparator):
        return WARN
    gated = before in (ALERT, WARN) and s.warning is not None and s.warning_recovery is not None
    if gated and s.warning_recovery is not None and not recovered(value, s.warning_recovery, comparator):
        return WARN
    return OK


def run(
    key: str,
    body: Mapping[str, Any],
    series: Sequence[Series],
    duration: int,
    open_end: bool,
    used: set[notes.Assumption],
    start: Start = FRESH,
    cache: FeedCache | None = None,
) -> Run:
    """`cache`: feeds shared with other runs on the same series (feed.feeds)."""
    s = settings(body, used)
    walk = partial(_walk, s, feeds(s.query, series, cache), duration, open_end, start)
    return Run(key, walk(used, None), s.notify_no_data, start, recorded(partial(walk, set())))


def _walk(
    s: Settings,
    fed: Mapping[Leaf, Feed],
    duration: int,
    open_end: bool,
    start: Start,
    used: set[notes.Assumption],
    steps: list[Step] | None,
) -> tuple[Change, ...]:
    """The run's state changes; each evaluation's step too, into `steps` when given (for a report)."""
    changes: list[Change] = []
    state = before = start.state
    evaluated = state != OK  # a monitor already alerting has been evaluated before the scenario
    empty_since: int | None = None
    silent = not any(fed.values())  # no series feeds the query: every window is empty, without reading one
    lined_up = None if silent else timeline(s.query, fed)
    # Walked for its changes alone at a one-minute cadence (a report's steps evaluate every minute): where the
    # window holds what it held a minute before, moved on, the last outcome is its outcome.
    fresh = (
        moved(s.query, fed, s.delay, open_end, duration) if not silent and steps is None and s.cadence == 1 else None
    )
    outcome: Outcome | None = None
    for t in range(0, duration + 1, s.cadence):
        if silent:
            outcome = None
        elif fresh is None or fresh[t]:
            outcome = evaluate_fed(s.query, fed, t, s.delay, open_end, s.require_full_window, lined_up=lined_up)
        value = None if outcome is None else outcome.value
        note = ""
        if outcome is None or outcome.empty:
            empty_since = t if empty_since is None else empty_since
            state, value, note = _empty(s, state, evaluated, t - empty_since, used)
        else:
            empty_since = None
            note = outcome.skipped
        if value is not None:
            evaluated = True
            state = classify(s, value, state, used)
        if state != before:
            changes.append((t, before, state))
            before = state
        if steps is not None:
            seen = outcome or Outcome(*window_bounds(s.query, t, s.delay, open_end), empty=True)
            if outcome is None or outcome.empty:
                seen = seen if value is None else Outcome(seen.start, seen.end, value=value)
                note = note.format(silent=t - (empty_since or 0))
            steps.append(Step(t, state, seen, note))
    return tuple(changes)


def lateness(series: Series) -> int:
    """The most minutes any point of the series arrives after its stamp."""
    return max((a - m for m, a in series.arrival.items()), default=0)


def arrival_blind(
    s: Settings, series: Sequence[Series], open_end: bool, late: Callable[[Series], int] = lateness
) -> bool:
    """Whether every point the query reads has arrived before the first window that holds it: then every
    evaluation sees all of its window's points, and the run depends on the points alone, not on when they arrive
    (a window holds minute m first at t = m + delay, or m + delay + 1 with its end open). Runs on the same points
    at different arrivals are then one run. `late`: `lateness`, or a memo of it."""
    bound = s.delay + (1 if open_end else 0)
    return all(late(x) <= bound for leaf in s.query.leaves for x in matching(series, leaf))


def _empty(
    s: Settings, state: str, evaluated: bool, silent: int, used: set[notes.Assumption]
) -> tuple[str, float | None, str]:
    """The state after an evaluation whose window holds no arrived point, the value it is evaluated as (a count
    query's 0), and a note for the report, `{silent}` standing for the minutes without data
    (https://docs.datadoghq.com/monitors/configuration/, https://docs.datadoghq.com/monitors/guide/on_missing_data/)."""
    if s.timeout is not None and state in (ALERT, WARN) and silent >= s.timeout:
        return OK, None, "auto-resolved (timeout_h)"
    if s.on_missing_data is not None:
        if s.on_missing_data == "default":
            if s.zero_when_empty:
                return state, 0.0, "empty window evaluated as 0"
            return state, None, "no data: last state kept"
        if silent < s.query.window:
            return state, None, "no data for {silent} min"
        return (OK if s.on_missing_data == "resolve" else NO_DATA), None, "no data for {silent} min"
    if s.counts:
        used.add(notes.EMPTY_COUNT_WINDOW)  # a count query is where an empty window might have meant 0
    if s.notify_no_data and evaluated and silent >= s.no_data_timeframe:
        return NO_DATA, None, "no data for {silent} min"
    return state, None, "no data for {silent} min: evaluation skipped"


def _count_query(node: Node) -> bool:
    """default_zero() opts out of the count-query zero (https://docs.datadoghq.com/monitors/guide/on_missing_data/)."""
    if isinstance(node, Call):
        return node.name != "default_zero" and _count_query(node.arg)
    return True
