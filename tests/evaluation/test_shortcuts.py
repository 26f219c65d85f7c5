"""The evaluation's shortcuts give what the general path gives, on random series and queries: a leaf's feed
reads what each series shows at each minute, aligned columns in arithmetic, feeds shared through a cache, an
outcome reused where the window holds what the one before held, one run for every arrival when the run sees every
point, a run walked for its state changes alone, and notifications read at those changes alone."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sync.core.evaluation import composite, monitor, slo
from sync.core.evaluation.feed import Feed, FeedCache, feeds, moved
from sync.core.evaluation.notify import notifications
from sync.core.evaluation.query import parse
from sync.core.evaluation.series import Series, space_aggregate
from sync.core.evaluation.states import ALERT, NO_DATA, OK, WARN, Run, Start, Step
from sync.core.evaluation.window import evaluate_fed, timeline

FAILED = "aws.sns.number_of_notifications_failed"  # a count metric: missing values are 0 under .as_count()
QUERIES = (
    "sum(last_{w}m):max:m{{queuename:q}} + max:n{{queuename:q}} > 1",
    "min(last_{w}m):default_zero(max:m{{queuename:q}}) - 3 * max:n{{queuename:q}} > 1",
    "avg(last_{w}m):max:m{{queuename:q}} / clamp_min(max:n{{queuename:q}}, 1) > 1",
    "max(last_{w}m):max:m{{queuename:q}} / max:n{{queuename:q}} > 1",
    "max(last_{w}m):abs(sum:m{{queuename:q}} - max:m{{queuename:q}}) * 2 > 1",
    "sum(last_{w}m):sum:" + FAILED + "{{queuename:q}}.as_count() / clamp_min(sum:n{{queuename:q}}.as_count(), 1) > 1",
    "sum(last_{w}m):sum:m{{queuename:q}}.as_count() + sum:n{{queuename:q}}.as_count() > 1",
    "change(max(last_{w}m),last_3m):max:m{{queuename:q}} + max:n{{queuename:q}} > 1",
    "pct_change(avg(last_{w}m),last_2m):max:m{{queuename:q}} > 1",
    "avg(last_{w}m):max:m{{queuename:q}} > 1",
)
MINUTES = 40
_VALUE = st.sampled_from([0.0, 1.0, 2.5, -4.0, 1e6, 0.1, 7.0])


@st.composite
def _series(draw: Any, metric: str, tags: dict[str, str], late: int) -> Series:
    """Points with gaps (often none, so that columns line up), each arriving up to `late` minutes after its minute."""
    gappy = draw(st.booleans())
    # Sometimes values held for stretches, as a scenario's shapes hold them: runs reuse outcomes there.
    steady = sorted(draw(st.sets(st.integers(1, MINUTES - 1), max_size=4))) if draw(st.booleans()) else None
    held = {m: draw(_VALUE) for m in [0, *steady]} if steady is not None else {}
    stamped = {
        m: held[max(k for k in held if k <= m)] if held else draw(_VALUE)
        for m in range(MINUTES)
        if not gappy or draw(st.integers(0, 4)) > 0
    }  # about one in five missing when gappy
    arrival = {m: m + draw(st.integers(0, late)) for m in stamped}
    return Series(metric, tags, stamped, arrival)


@st.composite
def _history(draw: Any, late: int = 6) -> list[Series]:
    q = {"queuename": "q"}
    # A metric is sometimes not reported at all: its leaf is missing from every window.
    out = [draw(_series(metric, q, late)) for metric in ("m", "n", FAILED) if draw(st.integers(0, 3))]
    if draw(st.booleans()):
        out.append(draw(_series("m", {**q, "region": "eu"}, late)))  # a second series the space aggregator merges
    return out


@pytest.mark.heavy(10)
@settings(max_examples=150, deadline=None)
@given(
    template=st.sampled_from(QUERIES),
    window=st.integers(1, 12),
    series=_history(),
    delay=st.integers(0, 6),
    open_end=st.booleans(),
    full=st.booleans(),
)
def test_shortcuts_give_what_the_general_path_gives(
    template: str, window: int, series: list[Series], delay: int, open_end: bool, full: bool
) -> None:
    """And a run reuses the last outcome where `moved` says the window holds what the one before held: each such
    window gives what the one before gave."""
    query = parse(template.format(w=window))
    cache: FeedCache = {}
    shared, again, plain = feeds(query, series, cache), feeds(query, series, cache), feeds(query, series)
    assert shared == again  # the cache hands out one feed per leaf and series
    lined_up = timeline(query, shared)
    fresh = moved(query, shared, delay, open_end, MINUTES + 8)
    before = None
    for t in range(MINUTES + 9):
        fast = evaluate_fed(query, shared, t, delay, open_end, full, lined_up=lined_up)
        general = evaluate_fed(query, plain, t, delay, open_end, full, shortcuts=False)
        assert repr(fast) == repr(general)
        if not fresh[t] and before is not None:
            assert (fast.value, fast.empty, bool(fast.skipped), fast.points) == before
        before = (fast.value, fast.empty, bool(fast.skipped), fast.points)


@settings(max_examples=150, deadline=None)
@given(series=_history(), window=st.integers(1, 12), t=st.integers(0, MINUTES + 8))
def test_a_feed_reads_what_the_series_show(series: list[Series], window: int, t: int) -> None:
    for leaf in parse("avg(last_5m):max:m{queuename:q} + sum:" + FAILED + "{queuename:q} > 1").leaves:
        matched = [s for s in series if s.metric == leaf.metric]  # one series, or two merged, or none
        start = t - window
        shown = {m: [v for s in matched if (v := s.visible(m, t)) is not None] for m in range(start, t + 1)}
        expected = {m: space_aggregate(leaf.space, vs) for m, vs in shown.items() if vs}
        minutes, values = Feed(leaf, series).arrived(start, t, t)
        assert dict(zip(minutes, values, strict=True)) == expected


def _body(template: str, window: int, delay_s: int, **options: Any) -> dict[str, Any]:
    opts = {"require_full_window": False, "thresholds": {"critical": 3}, "evaluation_delay": delay_s, **options}
    return {"type": "query alert", "query": template.format(w=window), "options": opts}


def _late(series: list[Series], lateness: dict[str, list[int]]) -> list[Series]:
    """The same points (the same objects) arriving with other delays."""
    return [Series(s.metric, s.tags, s.points, {m: m + lateness[s.metric][m % 7] for m in s.points}) for s in series]


@settings(max_examples=80, deadline=None)
@given(
    template=st.sampled_from(QUERIES),
    window=st.integers(1, 12),
    series=_history(late=0),
    delay_s=st.sampled_from([0, 60, 120, 300]),
    data=st.data(),
)
def test_a_run_that_sees_every_point_is_the_same_at_every_arrival(
    template: str, window: int, series: list[Series], delay_s: int, data: st.DataObject
) -> None:
    body = _body(template, window, delay_s, notify_no_data=True, no_data_timeframe=4)
    settings_ = monitor.settings(body, set())
    bound = settings_.delay + 1  # the window's end is open, as in a backtest
    lateness = st.lists(st.integers(0, bound), min_size=7, max_size=7)
    one = _late(series, {metric: data.draw(lateness) for metric in ("m", "n", FAILED)})
    other = _late(series, {metric: data.draw(lateness) for metric in ("m", "n", FAILED)})
    assert monitor.arrival_blind(settings_, one, True) and monitor.arrival_blind(settings_, other, True)
    first = monitor.run("k", body, one, MINUTES + 8, True, set())
    second = monitor.run("k", body, other, MINUTES + 8, True, set())
    assert repr(first.steps) == repr(second.steps)


def test_a_point_later_than_the_evaluation_delay_makes_the_run_depend_on_arrival() -> None:
    body = _body("avg(last_{w}m):max:m{{queuename:q}} > 1", 5, 60)
    s = monitor.settings(body, set())
    on_time = [Series("m", {"queuename": "q"}, {0: 5.0, 1: 5.0}, {0: 2, 1: 3})]  # 2 min late: within 1 + open end
    late = [Series("m", {"queuename": "q"}, {0: 5.0, 1: 5.0}, {0: 2, 1: 4})]  # 3 min late
    assert monitor.arrival_blind(s, on_time, True)
    assert not monitor.arrival_blind(s, late, True)
    assert not monitor.arrival_blind(s, on_time, False)  # a closed end reads the last minute one minute sooner


_STATES = st.sampled_from([OK, WARN, ALERT, NO_DATA])
_MESSAGES = st.sampled_from(
    [
        "@pd",
        "{{#is_alert}}@pd{{/is_alert}}{{#is_warning}}@chat{{/is_warning}}{{#is_recovery}}@pd{{/is_recovery}}",
        "{{#is_no_data}}@ops{{/is_no_data}}{{#is_alert_recovery}}@pd{{/is_alert_recovery}}",
        "{{^is_warning}}@pd{{/is_warning}}",
        "",
    ]
)


@settings(max_examples=150, deadline=None)
@given(
    states=st.lists(_STATES, min_size=1, max_size=60),
    cadence=st.integers(1, 5),
    start=_STATES,
    notify_no_data=st.booleans(),
    message=_MESSAGES,
)
def test_notifications_read_at_the_state_changes_alone_are_those_of_every_minute(
    states: list[str], cadence: int, start: str, notify_no_data: bool, message: str
) -> None:
    """Without a downtime or a renotification a monitor notifies at its state changes only: reading just those
    gives what walking every minute gives."""
    steps = tuple(Step(i * cadence, state) for i, state in enumerate(states))
    run = Run.of("k", steps, notify_no_data, Start(start, 3))
    duration = len(states) * cadence
    body = {"message": message, "options": {}}
    assert notifications(run, body, [], duration, set()) == notifications(
        run, body, [], duration, set(), shortcuts=False
    )


@settings(max_examples=100, deadline=None)
@given(
    template=st.sampled_from(QUERIES),
    window=st.integers(1, 12),
    series=_history(),
    start=_STATES,
    missing=st.sampled_from([None, *monitor.ON_MISSING_DATA]),
    timeout_h=st.sampled_from([None, 0.05]),
    delay_s=st.sampled_from([0, 60, 300]),
    open_end=st.booleans(),
    other=st.data(),
)
def test_a_run_read_for_its_changes_changes_where_its_steps_do(
    template: str,
    window: int,
    series: list[Series],
    start: str,
    missing: str | None,
    timeout_h: float | None,
    delay_s: int,
    open_end: bool,
    other: st.DataObject,
) -> None:
    """A run walks its evaluations for its state changes alone (reusing an outcome where the window holds what it
    held a minute before), and again for a report's steps, evaluating every minute: both walks agree, and a
    composite's that walks only the minutes after its monitors' changes agrees with one that walks them all."""
    options: dict[str, Any] = {"thresholds": {"critical": 3, "warning": 1, "critical_recovery": 2}}
    options |= {"notify_no_data": True, "no_data_timeframe": 4, "timeout_h": timeout_h, "on_missing_data": missing}
    body = _body(template, window, delay_s, **options)
    run = monitor.run("a", body, series, MINUTES + 8, open_end, set(), Start(start, 2))
    assert Run.of("a", run.steps, run.notify_no_data, run.start).changes == run.changes
    steps = tuple(Step(t, other.draw(_STATES)) for t in range(MINUTES + 8))
    b = Run.of("b", steps, False)
    for expression in ("${monitor_id:a} && ${monitor_id:b}", "!${monitor_id:a} || ${monitor_id:b}"):
        both = composite.run("c", {"query": expression}, {"a": run, "b": b}, MINUTES + 8, set())
        assert [step.t for step in both.steps] == list(range(MINUTES + 9))
        assert Run.of("c", both.steps, False, both.start).changes == both.changes


@settings(max_examples=60, deadline=None)
@given(
    series=_history(late=12),
    threshold=st.sampled_from([0.5, 2.0, 5.0]),
    interval=st.sampled_from([60, 300]),
    slow_first=st.booleans(),
)
def test_burn_rate_alerts_sharing_their_slices_verdicts_run_as_alone(
    series: list[Series], threshold: float, interval: int, slow_first: bool
) -> None:
    """The alerts of one SLO judge the same slices: sharing the verdicts (with the feeds they are known by)
    changes no alert's run, whichever runs first; another SLO judging the same series another way shares none."""
    slos = {
        key: {"type": "time_slice", "sli_specification": {"time_slice": spec}, "thresholds": [{"target": 90}]}
        for key, spec in (("e/q/age", _slice(threshold, interval)), ("e/q/other", _slice(threshold * 2, interval)))
    }
    alerts = [
        {"type": "slo alert", "query": f'burn_rate("${{slo_id:{key}}}").over("30d").long_window("{long}")'
         f'.short_window("{short}") > 2'}
        for key in slos
        for long, short in (("30m", "5m"), ("1h", "10m"))
    ]  # fmt: skip
    alerts = alerts[::-1] if slow_first else alerts
    alone = [slo.run("k", body, slos, series, MINUTES + 8, set()).changes for body in alerts]
    cache: FeedCache = {}
    verdicts: slo.Verdicts = {}
    shared = [slo.run("k", b, slos, series, MINUTES + 8, set(), cache=cache, verdicts=verdicts) for b in alerts]
    assert [run.changes for run in shared] == alone
    assert len(verdicts) == 2  # one way of judging the slices per SLO


def _slice(threshold: float, interval: int) -> dict[str, Any]:
    query = {"formulas": [{"formula": "query1"}], "queries": [{"name": "query1", "query": "max:m{queuename:q}"}]}
    return {"query": query, "comparator": "<=", "threshold": threshold, "query_interval_seconds": interval}
