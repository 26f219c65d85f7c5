"""The evaluation model, rule by rule, on small cases computed by hand."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from sync.core.evaluation import composite, downtime, notes
from sync.core.evaluation import slo as slo_model
from sync.core.evaluation.audience import Audience
from sync.core.evaluation.expect import Expectation
from sync.core.evaluation.monitor import run
from sync.core.evaluation.notes import Refused
from sync.core.evaluation.notify import MuteWindow, Notification, notifications
from sync.core.evaluation.query import parse
from sync.core.evaluation.series import Segment, Series, arrivals, points
from sync.core.evaluation.simulate import Case, simulate
from sync.core.evaluation.states import ALERT, NO_DATA, OK, WARN, Run, Step
from sync.core.evaluation.window import evaluate

TAGS = {"queuename": "q"}


def series(values: Mapping[int, float], metric: str = "m", arrival: Mapping[int, int] | None = None) -> Series:
    """Points that arrive the minute they are stamped, unless `arrival` says otherwise."""
    return Series(metric, TAGS, dict(values), dict(arrival or {}))


def body(query: str, **options: Any) -> dict[str, Any]:
    defaults: dict[str, Any] = {"require_full_window": False, "thresholds": {"critical": 10}}
    return {"type": "query alert", "query": query, "options": {**defaults, **options}, "message": "", "tags": []}


def states(query: str, values: Mapping[int, float], duration: int, **options: Any) -> dict[int, str]:
    result = run("k", body(query, **options), [series(values)], duration, True, set())
    return {step.t: step.state for step in result.steps}


def test_time_aggregators_reduce_the_window_points() -> None:
    data = series({0: 1, 1: 5, 2: 3})
    for aggregator, expected in (("avg", 3), ("max", 5), ("min", 1), ("sum", 9)):
        query = parse(f"{aggregator}(last_3m):max:m{{queuename:q}} > 10")
        # At t = 3 with no delay, the open window is minutes 0..2.
        assert evaluate(query, [data], 3, 0, True, False).value == expected


def test_window_end_open_or_closed_is_one_point_apart() -> None:
    query = parse("max(last_2m):max:m{queuename:q} > 10")
    data = series({0: 1, 1: 2, 2: 30})
    assert evaluate(query, [data], 2, 0, True, False).value == 2  # minutes 0..1
    assert evaluate(query, [data], 2, 0, False, False).value == 30  # minutes 0..2


def test_space_aggregation_merges_the_selected_series_only() -> None:
    query = parse("avg(last_1m):sum:m{queuename:q} > 10")
    other = Series("m", {"queuename": "other"}, {0: 100}, {})
    twin = Series("m", {"queuename": "q", "region": "eu"}, {0: 3}, {})
    assert evaluate(query, [series({0: 4}), twin, other], 1, 0, True, False).value == 7


def test_as_count_arithmetic_takes_the_sum_path() -> None:
    # Classic path: the mean of per-minute ratios would be (1/1 + 9/1) / 2 = 5; the as_count path divides the sums.
    query = parse("sum(last_2m):sum:a{queuename:q}.as_count() / sum:b{queuename:q}.as_count() > 1")
    assert query.as_count_path
    data = [series({0: 1, 1: 9}, "a"), series({0: 1, 1: 1}, "b")]
    assert evaluate(query, data, 2, 0, True, False).value == 5  # (1 + 9) / (1 + 1)
    data = [series({0: 2, 1: 1}, "a"), series({0: 1, 1: 4}, "b")]
    assert evaluate(query, data, 2, 0, True, False).value == pytest.approx(3 / 5)


def test_the_as_count_path_refuses_anything_but_sum() -> None:
    query = parse("avg(last_2m):sum:a{queuename:q} / sum:b{queuename:q}.as_count() > 1")
    with pytest.raises(Refused, match="only sum"):
        evaluate(query, [series({0: 1}, "a"), series({0: 1}, "b")], 2, 0, True, False)


def test_classic_arithmetic_is_per_minute_with_clamp_and_default_zero() -> None:
    query = parse("avg(last_2m):max:a{queuename:q} / clamp_min(max:b{queuename:q}, 1) > 1")
    # b is missing at minute 1 and no later point exists to interpolate to: clamp_min turns NaN into 1.
    data = [series({0: 4, 1: 6}, "a"), series({0: 2}, "b")]
    assert evaluate(query, data, 2, 0, True, False).value == (4 / 2 + 6 / 1) / 2
    query = parse("avg(last_2m):default_zero(max:a{queuename:q}) + max:b{queuename:q} > 1")
    assert evaluate(query, [series({1: 5}, "b")], 2, 0, True, False).value == 5


def test_nan_in_arithmetic_skips_the_evaluation() -> None:
    query = parse("avg(last_2m):max:a{queuename:q} + max:b{queuename:q} > 1")
    outcome = evaluate(query, [series({0: 1, 1: 1}, "a"), series({}, "b")], 2, 0, True, False)
    assert outcome.value is None and outcome.skipped


def test_gauges_are_interpolated_to_align_arithmetic() -> None:
    query = parse("max(last_3m):max:a{queuename:q} - max:b{queuename:q} > 100")
    data = [series({0: 10, 1: 10, 2: 10}, "a"), series({0: 0, 2: 4}, "b")]
    assert evaluate(query, data, 3, 0, True, False).value == 10  # minute 1: b interpolated to 2 -> 8; max 10


def test_evaluation_delay_shifts_the_window() -> None:
    # A breach stamped minute 20, D = 5 min, last_1m, end open: first seen at t = 20 + 5 + 1.
    found = states("max(last_1m):max:m{queuename:q} > 10", {20: 50}, 40, evaluation_delay=300)
    assert found[25] == OK and found[26] == ALERT


def test_points_count_only_once_they_arrive() -> None:
    query = parse("max(last_5m):max:m{queuename:q} > 10")
    late = series({10: 50}, arrival={10: 18})
    assert evaluate(query, [late], 15, 0, True, False).empty  # stamped inside the window, not yet arrived
    assert evaluate(query, [late], 18, 0, True, False).empty  # arrived, but the window has moved past it
    ok = series({10: 50}, arrival={10: 14})
    assert evaluate(query, [ok], 15, 0, True, False).value == 50


def test_queue_waking_from_idle_reports_its_first_points_late() -> None:
    used: set[notes.Assumption] = set()
    stamped = points([Segment(400, None), Segment(420, 1.0)])
    arrival = arrivals(stamped, 17, True, True, used)
    assert arrival[400] == 400 + 17 + 15 and arrival[414] == 414 + 32 and arrival[415] == 415 + 17
    assert notes.QUEUE_WAKE in used


def test_shapes_expand_to_points() -> None:
    made = points([Segment(2, 5.0), Segment(4, None), Segment(7, ramp=(0, 30)), Segment(10, 1.0, every=2)])
    assert made == {0: 5, 1: 5, 4: 0, 5: 15, 6: 30, 7: 1, 9: 1}


def test_require_full_window_skips_an_evaluation_missing_its_oldest_point() -> None:
    query = parse("avg(last_5m):max:m{queuename:q} > 10")
    data = series({1: 50, 2: 50, 3: 50, 4: 50})
    assert evaluate(query, [data], 5, 0, True, True).skipped  # minute 0 (the oldest bucket) is empty
    assert evaluate(query, [data], 6, 0, True, True).value == 50  # minutes 1..5: only minute 5 empty
    assert evaluate(query, [series({0: 50})], 5, 0, True, True).skipped  # four empty buckets


def test_require_full_window_must_be_explicit() -> None:
    with pytest.raises(Refused, match="require_full_window"):
        run(
            "k",
            {"type": "query alert", "query": "max(last_1m):max:m{queuename:q} > 1", "options": {}},
            [],
            5,
            True,
            set(),
        )


def test_no_data_after_the_timeframe_only_with_notify_no_data() -> None:
    query = "max(last_5m):max:m{queuename:q} > 10"
    values = {m: 1.0 for m in range(10)}  # the last point is minute 9: from t = 15 the open window is empty
    found = states(query, values, 40, notify_no_data=True, no_data_timeframe=10)
    assert found[14] == OK and found[15] == OK and found[24] == OK and found[25] == NO_DATA
    assert states(query, values, 40, notify_no_data=False)[40] == OK
    # The default timeframe is twice the window (U9): 10 min.
    assert states(query, values, 40, notify_no_data=True)[25] == NO_DATA


def test_an_empty_window_keeps_an_alert_until_timeout() -> None:
    query = "max(last_5m):max:m{queuename:q} > 10"
    values = {m: 50.0 for m in range(10)}
    assert states(query, values, 200)[200] == ALERT  # no timeout_h: the alert never resolves
    found = states(query, values, 200, timeout_h=1)
    assert found[74] == ALERT and found[75] == OK  # empty from t = 15, resolved 60 min later


def test_recovery_thresholds_gate_the_way_back() -> None:
    # U14's own example: 80 / warning 60 / critical_recovery 70; the series 90 -> 75 -> 65 -> 50.
    thresholds = {"critical": 80, "warning": 60, "critical_recovery": 70}
    found = states("max(last_1m):max:m{queuename:q} > 80", {0: 90, 1: 75, 2: 65, 3: 50}, 4, thresholds=thresholds)
    assert [found[t] for t in (1, 2, 3, 4)] == [ALERT, ALERT, WARN, OK]


def test_below_threshold_comparators_and_their_recovery() -> None:
    thresholds = {"critical": 1, "critical_recovery": 3}
    found = states("min(last_1m):max:m{queuename:q} < 1", {0: 0, 1: 2, 2: 3}, 3, thresholds=thresholds)
    assert [found[t] for t in (1, 2, 3)] == [ALERT, ALERT, OK]  # `<` recovers at >= 3


def test_renotify_repeats_while_alerting_and_stops_at_recovery() -> None:
    result = Run.of("k", tuple(Step(t, ALERT if 10 <= t < 100 else OK) for t in range(121)), False)
    sent = notifications(
        result, {"message": "{{#is_alert}}@pd{{/is_alert}}", "options": {"renotify_interval": 30}}, [], 120, set()
    )
    assert [(n.t, n.kind) for n in sent] == [(10, "alert"), (40, "renotify"), (70, "renotify"), (100, "recovery")]
    assert sent[0].targets == frozenset({"@pd"}) and sent[3].targets == frozenset()


def test_downtime_mutes_then_notifies_at_expiry() -> None:
    result = Run.of("k", tuple(Step(t, ALERT if t >= 20 else OK) for t in range(61)), False)
    mute = MuteWindow(10, 40)
    sent = notifications(result, {"message": "@pd", "options": {}}, [mute], 60, set())
    assert [(n.t, n.kind, n.muted) for n in sent] == [(20, "alert", True), (40, "downtime_end", False)]


def test_a_downtime_ending_when_a_renotification_is_overdue_notifies_once() -> None:
    # Alerting since minute 5, renotified every 30 minutes, muted from 20 to 70: at 70 the renotification the
    # downtime held back is overdue and the downtime's end notifies. One notification reaches the pager then,
    # not two for one monitor in one minute, and the next reminder counts from it.
    result = Run.of("k", tuple(Step(t, ALERT if t >= 5 else OK) for t in range(121)), False)
    body = {"message": "@pd", "options": {"renotify_interval": 30}}
    sent = notifications(result, body, [MuteWindow(20, 70)], 120, set())
    assert [(n.t, n.kind) for n in sent] == [(5, "alert"), (70, "downtime_end"), (100, "renotify")]


def test_recovery_inside_a_downtime_of_an_earlier_alert_is_sent() -> None:
    result = Run.of("k", tuple(Step(t, ALERT if 5 <= t < 30 else OK) for t in range(61)), False)
    sent = notifications(result, {"message": "@pd", "options": {}}, [MuteWindow(10, 50)], 60, set())
    assert [(n.t, n.kind, n.muted) for n in sent] == [(5, "alert", False), (30, "recovery", False)]
    quiet = MuteWindow(10, 50, mute_first_recovery_notification=True)
    assert notifications(result, {"message": "@pd", "options": {}}, [quiet], 60, set())[1].muted


def test_downtime_scope_by_tags() -> None:
    used: set[notes.Assumption] = set()
    assert MuteWindow(0, 1, ("env:dev",)).targets("k", ["env:dev", "queue:q"], used)
    assert not MuteWindow(0, 1, ("env:dev", "queue:x")).targets("k", ["env:dev", "queue:q"], used)
    assert not MuteWindow(0, 1, scope="queuename:q").targets("k", ["env:dev"], used)  # U18
    assert notes.DOWNTIME_SCOPE in used


@pytest.mark.parametrize(
    ("query", "a", "b", "expected"),
    [
        ("${monitor_id:a} && ${monitor_id:b}", ALERT, WARN, WARN),
        ("${monitor_id:a} && ${monitor_id:b}", ALERT, OK, OK),
        ("${monitor_id:a} && ${monitor_id:b}", NO_DATA, OK, OK),
        ("${monitor_id:a} || ${monitor_id:b}", WARN, ALERT, ALERT),
        ("${monitor_id:a} || ${monitor_id:b}", OK, OK, OK),
        ("${monitor_id:a} || !${monitor_id:b}", OK, OK, ALERT),
        ("${monitor_id:a} || !${monitor_id:b}", OK, NO_DATA, NO_DATA),
        ("!(${monitor_id:a} && ${monitor_id:b})", ALERT, ALERT, OK),
    ],
)
def test_composite_status_algebra(query: str, a: str, b: str, expected: str) -> None:
    assert composite.combine(composite.parse(query), {"a": a, "b": b}.__getitem__) == expected


def test_composite_follows_its_monitors_a_minute_later_and_keeps_state_on_no_data() -> None:
    a = Run.of("a", tuple(Step(t, ALERT if t >= 5 else OK) for t in range(20)), False)
    b = Run.of("b", tuple(Step(t, NO_DATA if t >= 10 else ALERT) for t in range(20)), False)
    body = {"type": "composite", "query": "${monitor_id:a} && ${monitor_id:b}", "options": {}}
    result = composite.run("c", body, {"a": a, "b": b}, 19, set())
    assert result.state_at(5) == OK and result.state_at(6) == ALERT
    assert result.state_at(12) == ALERT  # NO DATA without notify_no_data: the last known state


def test_queries_obs_emits_parse() -> None:
    query = parse(
        "avg(last_15m):( max:aws.sqs.approximate_number_of_messages_visible{queuename:p} "
        "+ max:aws.sqs.approximate_number_of_messages_not_visible{queuename:p} ) "
        "/ clamp_min(sum:aws.sqs.number_of_messages_deleted{queuename:p}.as_count(), 0.1) > 30"
    )
    assert query.window == 15 and query.threshold == 30 and query.as_count_path and len(query.leaves) == 3
    assert (
        parse("max(last_1h):avg:aws.ecs.service.memory_utilization.maximum{clustername:c,servicename:s} >= 90").window
        == 60
    )
    with pytest.raises(Refused, match="multi-alert"):
        parse("max(last_5m):max:m{*} by {queuename} > 1")


def test_on_missing_data_decides_an_empty_window() -> None:
    query = "max(last_5m):max:m{queuename:q} > 10"
    values = {m: 50.0 for m in range(10)}  # ALERT, then empty windows from t = 15
    assert states(query, values, 40, on_missing_data="resolve")[19] == ALERT
    assert states(query, values, 40, on_missing_data="resolve")[20] == OK  # after one window W of silence
    assert states(query, values, 40, on_missing_data="show_no_data")[20] == NO_DATA
    assert states(query, values, 40, on_missing_data="default")[40] == ALERT  # a gauge keeps its state
    failures = "aws.sns.number_of_notifications_failed"
    count = body(f"sum(last_5m):sum:{failures}{{queuename:q}}.as_count() > 0", on_missing_data="default")
    found = run("k", count, [series(values, failures)], 40, True, set())
    assert found.state_at(14) == ALERT and found.state_at(15) == OK  # a count query's empty window is 0


def test_renotify_statuses_and_occurrences() -> None:
    result = Run.of("k", tuple(Step(t, WARN) for t in range(100)), False)
    message = {"message": "{{#is_warning}}@chat{{/is_warning}}"}
    default = notifications(result, {**message, "options": {"renotify_interval": 20}}, [], 99, set())
    assert [n.kind for n in default] == ["warning"]  # by default only alert and no data renotify
    options = {"renotify_interval": 20, "renotify_statuses": ["warn"], "renotify_occurrences": 2}
    capped = notifications(result, {**message, "options": options}, [], 99, set())
    assert [(n.t, n.kind) for n in capped] == [(0, "warning"), (20, "renotify"), (40, "renotify")]


def test_as_count_on_a_count_metric_sums_whatever_the_aggregator() -> None:
    failures = "aws.sns.number_of_notifications_failed"
    data = [series({0: 2, 1: 3}, failures)]
    assert (
        evaluate(parse(f"avg(last_2m):sum:{failures}{{queuename:q}}.as_count() > 0"), data, 2, 0, True, False).value
        == 5
    )
    # On a gauge the modifier changes nothing (U4 for the SQS counters).
    assert (
        evaluate(
            parse("avg(last_2m):sum:m{queuename:q}.as_count() > 0"), [series({0: 2, 1: 3})], 2, 0, True, False
        ).value
        == 2.5
    )


def test_full_window_buckets_follow_the_windows_unit() -> None:
    # last_1h: six 10-minute buckets; points only in the first two leave four empty: not full.
    query = parse("avg(last_1h):max:m{queuename:q} > 10")
    assert evaluate(query, [series({m: 1 for m in range(20)})], 60, 0, True, True).skipped
    assert evaluate(query, [series({m: 1 for m in range(0, 60, 10)} | {30: 1})], 60, 0, True, True).value == 1


def test_a_case_with_a_composite_and_a_downtime() -> None:
    age = body("max(last_1m):max:age{queuename:q} > 10")
    age["message"] = "{{#is_alert}}@chat{{/is_alert}}"
    age["tags"] = ["queue:q"]
    stuck = body("max(last_1m):max:running{queuename:q} < 1", thresholds={"critical": 1})
    both = {
        "type": "composite",
        "query": "${monitor_id:e/q/age} && ${monitor_id:e/q/stuck}",
        "message": "{{#is_alert}}@pd{{/is_alert}}",
        "options": {},
        "tags": ["queue:q"],
    }
    data = (
        Series("age", TAGS, {m: 50.0 if m >= 10 else 1.0 for m in range(60)}, {}),
        Series("running", TAGS, {m: 0.0 if m >= 20 else 2.0 for m in range(60)}, {}),
    )
    keys = ("e/q/age", "e/q/stuck", "e/q/both")
    case = Case(
        scenario="s",
        env="e",
        incident_at=10,
        duration=59,
        series=data,
        monitors=dict(zip(keys, (age, stuck, both), strict=True)),
        expectations=(
            Expectation("q/both", ("e/q/both",), "pages_within", within=15),
            Expectation("age", ("e/q/age",), "notifies_none"),
        ),
        audience=Audience(frozenset({"@pd"}), frozenset({"@chat"})),
        mutes=(MuteWindow(0, 30, ("queue:q",)),),
    )
    result = simulate(case)
    # age alerts at 11 (muted); stuck at 21; the composite a minute later, at 22, muted too; the downtime
    # ends at 30 with both still alerting, and each notifies then.
    page, quiet = result.verdicts
    assert not page.passed and page.latest("page") == 30 and page.latest("alert") == 22
    assert not quiet.passed and quiet.detail == "notified @chat at minute 30"
    assert notes.COMPOSITE_LAG in result.assumptions and notes.WINDOW_EDGES in result.assumptions


def test_what_counts_as_a_page() -> None:
    staging = Audience(frozenset({"@slack-staging"}), frozenset({"@slack-staging"}))
    prod = Audience(frozenset({"@pd"}), frozenset({"@slack"}))
    warning = Notification(5, "warning", WARN, frozenset({"@slack-staging"}))
    alert = Notification(5, "alert", ALERT, frozenset({"@slack-staging"}))
    assert not staging.paged(warning) and staging.paged(alert)  # one channel for both: a warning is chat
    assert prod.paged(Notification(5, "alert", ALERT, frozenset({"@pd"})))
    assert not prod.paged(Notification(5, "alert", ALERT, frozenset({"@pd"}), muted=True))
    assert not prod.paged(Notification(5, "recovery", OK, frozenset({"@pd"})))  # closes an incident
    # A renotification reaches PagerDuty as a new trigger once the responder resolved the incident: a page,
    # unless the scenario says the incident is still open.
    assert prod.paged(Notification(5, "renotify", ALERT, frozenset({"@pd"})))
    still_open = Audience(frozenset({"@pd"}), frozenset({"@slack"}), incident_open=True)
    assert not still_open.paged(Notification(5, "renotify", ALERT, frozenset({"@pd"})))
    assert still_open.paged(Notification(5, "alert", ALERT, frozenset({"@pd"})))


def test_the_step_down_from_alert_to_warning_skips_the_audience_the_alert_reached() -> None:
    """`{{^is_alert_to_warning}}` inside the warning section: a first warning notifies, the step down does not."""
    step_down = "{{^is_alert_to_warning}}@pd{{/is_alert_to_warning}}"
    message = f"{{{{#is_alert}}}}@pd{{{{/is_alert}}}} {{{{#is_warning}}}}{step_down}{{{{/is_warning}}}}"
    states = [OK] * 5 + [WARN] * 5 + [ALERT] * 5 + [WARN] * 5 + [OK] * 5
    run = Run.of("k", tuple(Step(t, state) for t, state in enumerate(states)), False)
    sent = [(n.t, n.kind, sorted(n.targets)) for n in notifications(run, {"message": message}, [], 24, set())]
    assert sent[:3] == [(5, "warning", ["@pd"]), (10, "alert", ["@pd"]), (15, "warning", [])]


def test_alerts_within_the_grouping_window_join_the_open_incident() -> None:
    """PagerDuty time-based alert grouping: the window rolls on from the last alert grouped into the incident."""
    pages = [(91, "d"), (71, "a"), (73, "b"), (81, "c"), (125, "e"), (150, "f")]
    assert Audience(frozenset({"@pd"}), frozenset()).opening(pages) == sorted(pages)  # none declared
    grouped = Audience(frozenset({"@pd"}), frozenset(), group_minutes=30)
    # 73, 81 and 91 join 71's incident (each within 30 min of the one before); 125 is 34 min after 91: a new
    # incident, which 150 joins.
    assert grouped.opening(pages) == [(71, "a"), (125, "e")]
    assert grouped.opening([(0, "a"), (30, "b")]) == [(0, "a"), (30, "b")]  # 30 minutes apart is not within
    # Only an open incident takes alerts in: once every alert in it has recovered it is resolved.
    assert grouped.opening([(0, "a"), (10, "b")], [(5, "a")]) == [(0, "a"), (10, "b")]
    assert grouped.opening([(0, "a"), (3, "b"), (10, "c")], [(5, "a")]) == [(0, "a")]  # b still alerting
    assert grouped.opening([(0, "a"), (5, "b")], [(5, "a")]) == [(0, "a"), (5, "b")]  # recovery goes first


def _burn_rate_alert(short_window: str) -> tuple[dict[str, Any], dict[str, Any]]:
    slo = {
        "type": "time_slice",
        "sli_specification": {
            "time_slice": {
                "query": {
                    "formulas": [{"formula": "query1"}],
                    "queries": [{"data_source": "metrics", "name": "query1", "query": "max:age{queuename:q}"}],
                },
                "comparator": "<=",
                "threshold": 30,
                "query_interval_seconds": 300,
            }
        },
        "thresholds": [{"target": 99.5, "timeframe": "30d"}],
    }
    query = f'burn_rate("${{slo_id:e/q/age}}").over("30d").long_window("1h").short_window("{short_window}") > 14.4'
    return slo, {"type": "slo alert", "query": query, "options": {"thresholds": {"critical": 14.4}}}


def test_burn_rate_alerts_when_both_windows_burn() -> None:
    slo, alert = _burn_rate_alert("5m")
    values = {m: 10.0 if m < 30 else 100.0 for m in range(90)}
    result = slo_model.run("k", alert, {"e/q/age": slo}, [series(values, "age")], 90, set())
    # Slice [30, 35) is the first down: 1 of 12 slices in the hour burns 1/12 / 0.005 = 16.7 >= 14.4, and
    # the 5-minute window 200; the slice is complete at minute 35.
    assert result.state_at(34) == OK and result.state_at(35) == ALERT


def test_a_short_burn_window_over_late_data_never_confirms() -> None:
    values = {m: 10.0 if m < 30 else 100.0 for m in range(120)}
    late = Series("age", TAGS, values, {m: m + 17 for m in values})
    slo, alert = _burn_rate_alert("5m")
    # U19: the newest slice's points have not arrived yet, so it counts as up: the 5-minute window never burns.
    assert all(s.state == OK for s in slo_model.run("k", alert, {"e/q/age": slo}, [late], 120, set()).steps)
    slo, alert = _burn_rate_alert("30m")
    result = slo_model.run("k", alert, {"e/q/age": slo}, [late], 120, set())
    assert result.state_at(46) == OK and result.state_at(47) == ALERT  # minute 30's point arrives at 47


def test_burn_rate_refuses_what_it_cannot_know() -> None:
    slo, alert = _burn_rate_alert("5m")
    with pytest.raises(Refused, match="not among"):
        slo_model.run("k", alert, {}, [], 10, set())
    with pytest.raises(Refused, match="time-slice"):
        slo_model.run("k", alert, {"e/q/age": {**slo, "type": "metric"}}, [], 10, set())


EVENING = datetime(2026, 12, 1, 18, 0, tzinfo=UTC)  # minute 0: 19:00 in Berlin


def test_a_one_time_downtime_in_scenario_minutes() -> None:
    body = {
        "data": {
            "type": "downtime",
            "attributes": {
                "monitor_identifier": {"monitor_tags": ["env:dev"]},
                "scope": "*",
                "schedule": {"start": "2026-12-01T19:00:00Z", "end": "2026-12-01T20:30:00Z"},
                "notify_end_types": ["canceled"],
            },
        }
    }
    (window,) = downtime.windows(body, EVENING, 600, UTC)
    assert (window.start, window.end, window.monitor_tags, window.notify_on_expiry) == (60, 150, ("env:dev",), False)


def test_a_nightly_downtime_follows_its_wall_clock() -> None:
    attributes: dict[str, Any] = {
        "monitor_identifier": {"monitor_id": "${monitor_id:dev/critical/age}"},
        "scope": "env:dev",
        "schedule": {
            "timezone": "Europe/Berlin",
            "recurrences": [{"rrule": "FREQ=DAILY;INTERVAL=1", "start": "2026-11-01T19:00", "duration": "12h"}],
        },
    }
    found = downtime.windows(attributes, EVENING, 2000, ZoneInfo("Europe/Berlin"))
    # 19:00 Berlin is 18:00 UTC in December: minute 0, and again a day later.
    assert [(w.start, w.end) for w in found] == [(0, 720), (1440, 2160)]
    assert found[0].monitor_key == "dev/critical/age" and found[0].scope == "env:dev"
    weekdays = {
        **attributes,
        "schedule": {
            **attributes["schedule"],
            "recurrences": [
                {"rrule": "FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR", "start": "2026-11-02T19:00", "duration": "12h"}
            ],
        },
    }
    # 1 December 2026 is a Tuesday: the nights from Tuesday to Friday, not Saturday's or Sunday's.
    found = downtime.windows(weekdays, EVENING, 5 * 1440, ZoneInfo("Europe/Berlin"))
    assert [w.start for w in found] == [0, 1440, 2880, 4320]
    with pytest.raises(Refused, match="not modelled"):
        bad = {
            **attributes,
            "schedule": {"recurrences": [{"rrule": "FREQ=MINUTELY", "start": "2026-11-01T19:00", "duration": "1h"}]},
        }
        downtime.windows(bad, EVENING, 100, UTC)


def test_a_recurrence_obs_writes_is_placed_without_a_start() -> None:
    """obs sends no recurrence start (its rules fix their own times); monthly rules are modelled too."""
    attributes: dict[str, Any] = {
        "monitor_identifier": {"monitor_tags": ["env:dev"]},
        "schedule": {
            "timezone": "Europe/Berlin",
            "recurrences": [
                {"rrule": "FREQ=DAILY;BYHOUR=19;BYMINUTE=0", "duration": "12h"},
                {"rrule": "FREQ=MONTHLY;BYMONTHDAY=3;BYHOUR=19;BYMINUTE=0", "duration": "1d"},
            ],
        },
    }
    # Minute 0 is 19:00 Berlin on 1 December; the monthly one on the 3rd holds the mute until 4 December 19:00,
    # when that night's begins: one stretch.
    found = downtime.windows(attributes, EVENING, 4 * 1440, ZoneInfo("Europe/Berlin"))
    assert [(w.start, w.end) for w in found] == [(0, 720), (1440, 2160), (2880, 5040), (5760, 6480)]
    with pytest.raises(Refused, match="without a start"):
        weekly = {"rrule": "FREQ=WEEKLY;BYHOUR=19;BYMINUTE=0", "duration": "1h"}
        downtime.windows({**attributes, "schedule": {"recurrences": [weekly]}}, EVENING, 100, UTC)


def test_expiry_notifies_only_for_the_end_states_and_types_it_lists() -> None:
    result = Run.of("k", tuple(Step(t, ALERT if t >= 5 else OK) for t in range(40)), False)
    for window, expected in (
        (MuteWindow(0, 20), [(5, "alert", True), (20, "downtime_end", False)]),
        (MuteWindow(0, 20, end_states=("warn",)), [(5, "alert", True)]),
        (MuteWindow(0, 20, notify_on_expiry=False), [(5, "alert", True)]),
    ):
        sent = notifications(result, {"message": "@pd", "options": {}}, [window], 39, set())
        assert [(n.t, n.kind, n.muted) for n in sent] == expected


def test_an_expectation_must_hold_under_both_readings_of_the_window_edges() -> None:
    # A breach stamped at the last minute: the closed window [t - 1, t] sees it at t = 10, the open one never.
    case = Case(
        scenario="s",
        env="e",
        incident_at=0,
        duration=10,
        series=(series({10: 50}),),
        monitors={"e/q/m": body("max(last_1m):max:m{queuename:q} > 10")},
        expectations=(Expectation("m", ("e/q/m",), "alerts_never"),),
        audience=Audience(frozenset(), frozenset()),
    )
    (verdict,) = simulate(case).verdicts
    assert not verdict.passed and verdict.failed_reading == "window end closed"
    assert verdict.checks["window end open"].passed and verdict.detail == "alerted at minute 10"


def test_a_change_alert_subtracts_the_series_n_minutes_earlier_minute_by_minute() -> None:
    query = parse("change(max(last_2m),last_2m):max:m{queuename:q} > 0")
    assert query.change == "change" and query.window == 2 and len(query.leaves) == 2
    # At t = 4 the open window is minutes 2..3: 0 - 5 = -5 and 1 - 0 = 1, so max = 1. Subtracting the
    # aggregates instead would give max(0, 1) - max(5, 0) = -4: the guide differences first, then aggregates.
    assert evaluate(query, [series({0: 5, 1: 0, 2: 0, 3: 1})], 4, 0, True, False).value == 1


def test_a_change_alert_pages_on_each_rise_of_a_level() -> None:
    # A DLQ holding 1 message from minute 0, a second from minute 20: change(max(last_3m),last_3m) > 0.
    values = {m: 1.0 if m < 20 else 2.0 for m in range(40)}
    found = states("change(max(last_3m),last_3m):max:m{queuename:q} > 0", values, 40, thresholds={"critical": 0})
    # t = 21: minutes 18..20, 2 - 1 at minute 20. Minutes 20..22 are 2 - 1 (against 17..19), 23 on are 2 - 2:
    # t = 25 (minutes 22..24) still sees 1; t = 26 (minutes 23..25) sees only 0s and is back to OK.
    assert found[20] == OK and found[21] == ALERT and found[25] == ALERT and found[26] == OK


def test_a_change_alert_without_the_earlier_point_skips_the_evaluation() -> None:
    # The queue wakes at minute 10: minute 10 has no point 3 minutes earlier (none to interpolate from either).
    used: set[notes.Assumption] = set()
    result = run(
        "k",
        body("change(max(last_3m),last_3m):max:m{queuename:q} > 0", thresholds={"critical": 0}),
        [series({m: 1.0 for m in range(10, 30)})],
        30,
        True,
        used,
    )
    steps = {step.t: step for step in result.steps}
    assert steps[11].outcome is not None and steps[11].outcome.skipped  # minute 10: 1 - NaN
    assert steps[16].outcome is not None and steps[16].outcome.value == 0  # minutes 13..15 against 10..12
    assert all(step.state == OK for step in result.steps) and notes.CHANGE_ALIGNMENT in used


def test_pct_change_on_the_classic_and_the_as_count_paths() -> None:
    # Classic: per minute ((a - b) / b) * 100, then avg: minute 1 (4 - 2) / 2 = 100 %, minute 2 (5 - 4) / 4 = 25 %.
    query = parse("pct_change(avg(last_2m),last_1m):max:m{queuename:q} > 50")
    assert evaluate(query, [series({0: 2, 1: 4, 2: 5})], 3, 0, True, False).value == pytest.approx(62.5)
    # With .as_count(): sums first. Minutes 2..3 sum to 2 + 4 = 6, minutes 0..1 to 1 + 1 = 2: (6 - 2) / 2 = 200 %.
    failed = "aws.sns.number_of_notifications_failed"
    query = parse(f"pct_change(sum(last_2m),last_2m):sum:{failed}{{queuename:q}}.as_count() > 0")
    assert query.as_count_path
    data = [series({0: 1, 1: 1, 2: 2, 3: 4}, failed)]
    assert evaluate(query, data, 4, 0, True, False).value == pytest.approx(200)


def test_forecasts_are_left_out_of_any_and_an_error_when_named() -> None:
    forecast = body("max(next_1d):forecast(max:m{queuename:q}, 'linear', 1) >= 10")
    with pytest.raises(notes.Unmodelled, match="forecast algorithm"):
        parse(str(forecast["query"]))
    age = body("max(last_1m):max:m{queuename:q} > 10")
    age["message"] = "@pd"
    case = Case(
        scenario="s",
        env="e",
        incident_at=0,
        duration=30,
        series=(series({m: 50.0 for m in range(5, 30)}),),
        monitors={"e/q/age": age, "e/q/forecast": forecast},
        expectations=(
            Expectation("any", ("e/q/age", "e/q/forecast"), "pages_within", within=10, may_leave_out=True),
            Expectation("forecast", ("e/q/forecast",), "pages_count", count=0),
        ),
        audience=Audience(frozenset({"@pd"}), frozenset()),
    )
    anything, named = simulate(case).verdicts
    assert anything.passed and anything.expectation.keys == ("e/q/age",)
    assert anything.left_out == (("e/q/forecast", "forecast: Datadog's forecast algorithm is not modelled"),)
    assert not named.passed and "forecast algorithm" in named.refused


def test_a_change_alert_compares_only_the_minutes_whose_point_has_arrived() -> None:
    # Points arrive 2 minutes late: at t = 12 (no delay, open window 9..11) minute 11 has not arrived, though
    # minute 8, three before it, has. Minutes 9 and 10 are compared (2 - 1 each); minute 11 is not a NaN that
    # skips the evaluation, it is not there yet.
    values = {m: 1.0 if m < 9 else 2.0 for m in range(20)}
    late = series(values, arrival={m: m + 2 for m in values})
    query = parse("change(max(last_3m),last_3m):max:m{queuename:q} > 0")
    outcome = evaluate(query, [late], 12, 0, True, False)
    assert (outcome.value, outcome.points) == (1, 2)


def test_a_page_can_be_expected_of_a_later_incident() -> None:
    pager = body("max(last_1m):max:m{queuename:q} > 10")
    pager["message"] = "@pd"
    # Over 10 at minutes 5..9 and again from 30. The open window [t - 1, t - 1] pages at 6 and 31; the closed
    # one, [t - 1, t], at 5 and 30. Counted from minute 30, the later reading's page is at 31.
    values = {m: 50.0 if 5 <= m < 10 or m >= 30 else 1.0 for m in range(40)}
    case = Case(
        scenario="s",
        env="e",
        incident_at=5,
        duration=39,
        series=(series(values),),
        monitors={"e/q/m": pager},
        expectations=(
            Expectation("m", ("e/q/m",), "pages_within", within=2, after=30),
            Expectation("m", ("e/q/m",), "pages_within", within=0, after=30),
        ),
        audience=Audience(frozenset({"@pd"}), frozenset()),
    )
    second, too_soon = simulate(case).verdicts
    assert second.passed and second.latest("page") == 31
    assert second.expectation.describe() == "m: pages within 2 min of minute 30"
    assert not too_soon.passed and too_soon.failed_reading == "window end open"
