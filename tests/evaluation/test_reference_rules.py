"""The evaluation model against the numbers Datadog's own pages work through: the delayed window, value-minutes of
a sum, the two arithmetic paths, the composite truth table, recovery thresholds, and the drain-time estimator's
pages (each test names the page its numbers come from)."""

from __future__ import annotations

import pytest

from sync.core.evaluation import composite
from sync.core.evaluation import slo as slo_model
from sync.core.evaluation.monitor import recovered
from sync.core.evaluation.query import parse
from sync.core.evaluation.series import Series
from sync.core.evaluation.states import ALERT, NO_DATA, OK, WARN, Run, Step
from sync.core.evaluation.window import evaluate, window_bounds
from tests.evaluation.worked_cases import first, monitor, series, states


def at_once(minute: int) -> int:
    return minute


def test_at_7_00_with_900_s_a_5_minute_window_reads_6_40_to_6_45() -> None:
    """ "if the delay is set to 900 seconds (15 minutes), the monitor is evaluating at 7:00, and the time window is
    last 5 minutes, then it evaluates data from 6:40 to 6:45": https://docs.datadoghq.com/monitors/configuration/"""
    seven = 7 * 60
    query = parse("avg(last_5m):max:m{queuename:foo} > 1")
    assert window_bounds(query, seven, 15, open_end=False) == (6 * 60 + 40, 6 * 60 + 45)
    assert window_bounds(query, seven, 15, open_end=True) == (6 * 60 + 40, 6 * 60 + 44)  # the minute 6:45 excluded


def test_a_sum_over_a_gauge_adds_values_not_points() -> None:
    """sum "adds the value of each data point, not the number of data points": five visible messages for ten
    one-minute points give 50. https://docs.datadoghq.com/monitors/guide/monitor_aggregators/"""
    query = parse("sum(last_10m):max:m{queuename:foo} > 1")
    five = series({m: 5.0 for m in range(10)}, at_once)
    assert evaluate(query, [five], 10, 0, True, False).value == 50


@pytest.mark.parametrize(("total", "classic", "as_count"), [(10, 1.5, 0.3), (5, 3.0, 0.6)])
def test_the_as_count_guides_error_rate_on_both_paths(total: float, classic: float, as_count: float) -> None:
    """Errors 1, 2, 3, 4, 5 over five minutes against a total of 10 a minute: the classic path sums the per-minute
    ratios (1.5), the as_count path divides the sums (0.3); an earlier revision of the page used a total of 5
    (3 and 0.6). https://docs.datadoghq.com/monitors/guide/as-count-in-monitor-evaluations/"""
    errors = series({m: float(m + 1) for m in range(5)}, at_once, metric="requests.error")
    totals = series({m: total for m in range(5)}, at_once, metric="requests.total")
    rates = parse(
        "sum(last_5m):sum:requests.error{queuename:foo}.as_rate() / sum:requests.total{queuename:foo}.as_rate() > 1"
    )
    counts = parse(
        "sum(last_5m):sum:requests.error{queuename:foo}.as_count() / sum:requests.total{queuename:foo}.as_count() > 1"
    )
    assert not rates.as_count_path and counts.as_count_path
    assert evaluate(rates, [errors, totals], 5, 0, True, False).value == pytest.approx(classic)
    assert evaluate(counts, [errors, totals], 5, 0, True, False).value == pytest.approx(as_count)


# The truth table of https://docs.datadoghq.com/monitors/types/composite/ ("Computing trigger conditions"), row by
# row; "Last known" keeps the composite's state from before (here ALERT).
TRUTH_TABLE = [
    (ALERT, WARN, "&&", None, WARN),
    (ALERT, WARN, "||", None, ALERT),
    (ALERT, OK, "&&", None, OK),
    (ALERT, OK, "||", None, ALERT),
    (WARN, OK, "&&", None, OK),
    (WARN, OK, "||", None, WARN),
    (NO_DATA, WARN, "&&", True, NO_DATA),
    (NO_DATA, WARN, "||", True, WARN),
    (NO_DATA, WARN, "&&", False, "last known"),
    (NO_DATA, WARN, "||", False, WARN),
    (NO_DATA, OK, "&&", False, OK),
    (NO_DATA, OK, "||", False, "last known"),
    (NO_DATA, OK, "&&", True, OK),
    (NO_DATA, OK, "||", True, NO_DATA),
    (NO_DATA, NO_DATA, "&&", True, NO_DATA),
    (NO_DATA, NO_DATA, "||", True, NO_DATA),
]


@pytest.mark.parametrize(("a", "b", "op", "notify_no_data", "expected"), TRUTH_TABLE)
def test_the_composite_truth_table(a: str, b: str, op: str, notify_no_data: bool | None, expected: str) -> None:
    """Both monitors alert until minute 5, then take the row's states; the composite follows a minute later.
    https://docs.datadoghq.com/monitors/types/composite/"""

    def constituent(key: str, later: str) -> Run:
        return Run.of(key, tuple(Step(t, ALERT if t < 5 else later) for t in range(10)), bool(notify_no_data))

    flags = [notify_no_data] if notify_no_data is not None else [True, False]
    for flag in flags:
        query = f"${{monitor_id:a}} {op} ${{monitor_id:b}}"
        body = {"type": "composite", "query": query, "options": {"notify_no_data": flag}}
        result = composite.run("c", body, {"a": constituent("a", a), "b": constituent("b", b)}, 9, set())
        assert result.state_at(5) == ALERT
        assert result.state_at(9) == (ALERT if expected == "last known" else expected)


@pytest.mark.parametrize(
    ("comparator", "recovery", "value", "recovers"),
    [
        (">", 70, 70, True),  # `>` recovers at value <= the recovery threshold
        (">", 70, 70.5, False),
        (">=", 70, 70, False),  # `>=` recovers below it
        (">=", 70, 69.5, True),
        ("<", 10, 10, True),  # `<` recovers at value >= it
        ("<", 10, 9.5, False),
        ("<=", 10, 10, False),  # `<=` recovers above it
        ("<=", 10, 10.5, True),
    ],
)
def test_the_recovery_condition_of_each_comparator(
    comparator: str, recovery: float, value: float, recovers: bool
) -> None:
    """The recovery-threshold table: https://docs.datadoghq.com/monitors/guide/recovery-thresholds/"""
    assert recovered(value, recovery, comparator) is recovers


def test_without_a_recovery_threshold_a_monitor_recovers_when_the_condition_stops() -> None:
    """ "If no recovery threshold is set, the monitor recovers whenever the alert conditions are no longer met";
    with one it stays in ALERT until the value passes it. https://docs.datadoghq.com/monitors/guide/recovery-thresholds/"""
    query = "max(last_1m):max:m{queuename:foo} > 80"
    values = series({0: 90.0, 1: 75.0, 2: 65.0}, at_once)
    plain = states(monitor(query, 0), values, 3)
    gated = states(monitor(query, 0, thresholds={"critical": 80, "critical_recovery": 70}), values, 3)
    assert [plain[t] for t in (1, 2, 3)] == [ALERT, OK, OK]
    assert [gated[t] for t in (1, 2, 3)] == [ALERT, ALERT, OK]


DRAIN = (
    "avg(last_15m):( max:aws.sqs.approximate_number_of_messages_visible{queuename:foo} "
    "+ max:aws.sqs.approximate_number_of_messages_not_visible{queuename:foo} ) "
    "/ clamp_min(sum:aws.sqs.number_of_messages_deleted{queuename:foo}, 0.1) > 30"
)


def _queue(visible: dict[int, float], deleted: float = 0.0) -> list[Series]:
    return [
        series(visible, at_once, metric="aws.sqs.approximate_number_of_messages_visible"),
        series({m: 0.0 for m in visible}, at_once, metric="aws.sqs.approximate_number_of_messages_not_visible"),
        series({m: deleted for m in visible}, at_once, metric="aws.sqs.number_of_messages_deleted"),
    ]


@pytest.mark.parametrize(("stuck", "value"), [(4, 40.0), (3, 30.0)])
def test_clamp_min_turns_stuck_messages_into_a_drain_time_page(stuck: int, value: float) -> None:
    """On the classic path the average of per-minute ratios, with clamp_min(..., 0.1) lifting zero deletions to 0.1:
    4 stuck messages give 4 / 0.1 = 40 (a page at 30), 3 give exactly 30 (not above it). clamp_min sets values
    under it, NaN included, to it: https://docs.datadoghq.com/dashboards/functions/exclusion/"""
    query = parse(DRAIN)
    outcome = evaluate(query, _queue({m: float(stuck) for m in range(15)}), 15, 0, True, False)
    assert outcome.value == pytest.approx(value)


def test_one_minute_of_burst_before_a_delete_lands_pages_on_a_healthy_queue() -> None:
    """A single minute with 50 visible and no delete yet: 500 / 15 = 33 on average over the window, above 30.
    https://docs.datadoghq.com/monitors/guide/as-count-in-monitor-evaluations/ (the classic path)"""
    burst = {m: (50.0 if m == 7 else 0.0) for m in range(15)}
    assert evaluate(parse(DRAIN), _queue(burst), 15, 0, True, False).value == pytest.approx(500 / 15)


def test_the_sum_path_drain_time_is_the_mean_backlog_over_deletes_per_minute() -> None:
    """On the as_count path, sum(last_15m): (default_zero(V) + default_zero(NV)) / sum(D).as_count() divides the
    window sums: the mean backlog over the deletes a minute.
    https://docs.datadoghq.com/monitors/guide/as-count-in-monitor-evaluations/"""
    query = parse(
        "sum(last_15m):( default_zero(max:aws.sqs.approximate_number_of_messages_visible{queuename:foo}) "
        "+ default_zero(max:aws.sqs.approximate_number_of_messages_not_visible{queuename:foo}) ) "
        "/ sum:aws.sqs.number_of_messages_deleted{queuename:foo}.as_count() > 30"
    )
    visible = {m: 30.0 for m in range(15)}
    outcome = evaluate(query, _queue(visible, deleted=0.25), 15, 0, True, False)
    assert query.as_count_path and outcome.value == pytest.approx(30 / 0.25)  # 120 minutes to drain


def test_a_stall_pages_about_18_minutes_later_through_a_10_minute_average() -> None:
    """avg(last_10m) > 30 s at 900 s of delay: age grows a second a second from the stall, so the delayed window's
    average first passes 30 s when its end is about 3.2 minutes past the stall: a page about 18 minutes after it,
    at best (data crawled promptly). https://docs.datadoghq.com/monitors/configuration/ (evaluation delay) and
    https://docs.datadoghq.com/integrations/guide/cloud-metric-delay/"""
    stall = 100
    # The Maximum of each minute [m, m + 1) after the stall: 60, 120, ... seconds; a healthy queue before it.
    ages = {m: (60.0 * (m + 1 - stall) if m >= stall else 0.0) for m in range(160)}
    found = states(monitor("avg(last_10m):max:m{queuename:foo} > 30", 900), series(ages, lambda m: m + 2), 160)
    assert first(found) == stall + 18


def _time_slice_slo(target: float) -> dict[str, object]:
    spec = {
        "query": {
            "formulas": [{"formula": "query1"}],
            "queries": [{"data_source": "metrics", "name": "query1", "query": "max:m{queuename:foo}"}],
        },
        "comparator": "<=",
        "threshold": 30,
        "query_interval_seconds": 60,
    }
    return {"type": "time_slice", "sli_specification": {"time_slice": spec}, "thresholds": [{"target": target}]}


def test_a_burn_rate_alert_needs_both_windows_at_the_threshold() -> None:
    """Burn rate = error rate / (1 - target); ALERT while both windows burn at the threshold. The recommended
    30-day pair 14.4 / 1 h / 5 m on a 99.9 % SLO of 1-minute slices: one bad minute burns (1/60) / 0.001 = 16.7
    over the hour and (1/5) / 0.001 = 200 over five minutes, so it alerts until it leaves the short window.
    https://docs.datadoghq.com/service_level_objectives/burn_rate/"""
    query = 'burn_rate("${slo_id:s}").over("30d").long_window("1h").short_window("5m") > 14.4'
    alert = {"type": "slo alert", "query": query, "options": {"thresholds": {"critical": 14.4}}}
    bad = {m: (100.0 if m == 60 else 10.0) for m in range(90)}
    result = slo_model.run("k", alert, {"s": _time_slice_slo(99.9)}, [series(bad, at_once)], 90, set())
    assert [result.state_at(t) for t in (60, 61, 65, 66)] == [OK, ALERT, ALERT, OK]
    assert "burn rate 16.67 over 1h, 200.00 over 5m" in result.steps[61].note
