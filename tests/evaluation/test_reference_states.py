"""States and notifications as Datadog's pages describe them: cadence, a window that is not full, missing data,
auto-resolve, renotification and downtimes (each test names the page it follows)."""

from __future__ import annotations

from typing import Any

import pytest

from sync.core.evaluation.monitor import run
from sync.core.evaluation.notify import MuteWindow, notifications
from sync.core.evaluation.states import ALERT, NO_DATA, OK, WARN, Run, Step
from tests.evaluation.worked_cases import first, monitor, series, states

QUERY = "max(last_5m):max:m{queuename:foo} > 10"


def at_once(minute: int) -> int:
    return minute


@pytest.mark.parametrize(("window", "every"), [("last_1h", 1), ("last_1d", 10), ("last_2d", 30), ("last_1w", 30)])
def test_the_cadence_slows_for_windows_of_a_day_or_more(window: str, every: int) -> None:
    """Every minute below 24 h, every 10 minutes from 24 h, every 30 minutes from 48 h.
    https://docs.datadoghq.com/monitors/configuration/"""
    body = monitor(f"avg({window}):max:m{{queuename:foo}} > 10", 0)
    result = run("k", body, [series({0: 1.0}, at_once)], 120, True, set())
    assert [step.t for step in result.steps][:3] == [0, every, 2 * every]


def test_a_window_that_is_not_full_leaves_the_state_unchanged() -> None:
    """require_full_window: with the oldest bucket empty, or more than three empty, "the evaluation is canceled and
    the monitor state is unchanged". https://docs.datadoghq.com/monitors/types/metric/"""
    query = "avg(last_5m):max:m{queuename:foo} > 10"
    values = series({m: 50.0 for m in range(10)} | {12: 1.0}, at_once)  # alerting, one healthy point after a gap
    full = states(monitor(query, 0, require_full_window=True), values, 20)
    partial = states(monitor(query, 0, require_full_window=False), values, 20)
    # t = 14: minutes 9..13, three empty and the oldest filled: evaluated, (50 + 1) / 2 is still above 10.
    assert full[14] == partial[14] == ALERT
    # t = 15, 16: the oldest minute (10, 11) is empty; t = 17: minutes 13..16, four, are. The value alone, 1,
    # would recover; canceled, the ALERT stays.
    assert [partial[t] for t in (15, 16, 17)] == [OK] * 3
    assert [full[t] for t in (15, 16, 17)] == [ALERT] * 3


def test_no_data_needs_an_evaluation_first_and_the_timeframe() -> None:
    """ "The monitor must be able to evaluate data before alerting on missing data"; then NO DATA after
    no_data_timeframe (2 x the window when omitted), only with notify_no_data.
    https://docs.datadoghq.com/monitors/configuration/ and https://docs.datadoghq.com/api/latest/monitors/"""
    never = states(monitor(QUERY, 0, notify_no_data=True), series({}, at_once), 60)
    assert set(never.values()) == {OK}
    stopped = states(monitor(QUERY, 0, notify_no_data=True), series({m: 1.0 for m in range(10)}, at_once), 60)
    # The open window is empty from t = 15 (the last point, 9, leaves [t - 5, t)); 2 x 5 minutes later: NO DATA.
    assert first(stopped, NO_DATA) == 25


def _sent(body: dict[str, Any], values: dict[int, float], duration: int) -> list[tuple[int, str]]:
    result = run("k", body, [series(values, at_once)], duration, True, set())
    return [(n.t, n.kind) for n in notifications(result, body, [], duration, set())]


@pytest.mark.parametrize(
    ("on_missing_data", "state", "kinds"),
    [
        ("show_no_data", NO_DATA, ["alert"]),  # NO DATA shown, nobody told
        ("show_and_notify_no_data", NO_DATA, ["alert", "no_data"]),
        ("resolve", OK, ["alert", "recovery"]),
        ("default", ALERT, ["alert"]),  # a gauge: the last known status
    ],
)
def test_on_missing_data_decides_what_an_empty_window_shows_and_who_hears(
    on_missing_data: str, state: str, kinds: list[str]
) -> None:
    """The on_missing_data table; the missing-data window is the evaluation window.
    https://docs.datadoghq.com/monitors/guide/on_missing_data/"""
    body = monitor(QUERY, 0, on_missing_data=on_missing_data)
    body["message"] = "@pd"
    values = {m: 50.0 for m in range(10)}
    assert states(body, series(values, at_once), 60)[60] == state
    assert [kind for _, kind in _sent(body, values, 60)] == kinds


def test_auto_resolve_fires_on_silence_and_the_alert_returns_with_breaching_data() -> None:
    """timeout_h resolves only when data stops; if the query still breaches at the next evaluation, "the monitor
    triggers an alert again". https://docs.datadoghq.com/monitors/configuration/"""
    body = monitor(QUERY, 0, timeout_h=1)
    values = {m: 50.0 for m in range(10)} | {m: 50.0 for m in range(100, 120)}
    found = states(body, series(values, at_once), 130)
    assert found[74] == ALERT and found[75] == OK  # silent from t = 15, resolved an hour later
    assert found[100] == OK and found[101] == ALERT  # data breaches again: alerted again


def test_renotify_repeats_the_current_status_until_it_resolves() -> None:
    """renotify_interval: minutes "after the last notification before a monitor re-notifies on the current
    status. It only re-notifies if it's not resolved"; no data renotifies by default, warn does not.
    https://docs.datadoghq.com/monitors/notify/ and https://docs.datadoghq.com/api/latest/monitors/"""
    states_over_time = [WARN] * 40 + [NO_DATA] * 40 + [OK] * 40
    result = Run.of("k", tuple(Step(t, s) for t, s in enumerate(states_over_time)), notify_no_data=True)
    body = {"message": "@pd", "options": {"renotify_interval": 15}}
    sent = [(n.t, n.kind) for n in notifications(result, body, [], 119, set())]
    assert sent == [(0, "warning"), (40, "no_data"), (55, "renotify"), (70, "renotify"), (80, "recovery")]


def test_a_downtime_mutes_transitions_but_not_states_and_its_expiry_notifies() -> None:
    """Downtimes "silence all monitors' alerts and notifications, but do not prevent monitor states
    transitions"; a monitor alert-worthy when a downtime expires notifies again.
    https://docs.datadoghq.com/monitors/downtimes/"""
    result = Run.of("k", tuple(Step(t, ALERT if 10 <= t < 20 or t >= 30 else OK) for t in range(60)), False)
    sent = notifications(result, {"message": "@pd", "options": {}}, [MuteWindow(5, 40)], 59, set())
    assert [(n.t, n.kind, n.muted) for n in sent] == [
        (10, "alert", True),
        (20, "recovery", True),  # the alert began inside the downtime: its recovery is muted too
        (30, "alert", True),
        (40, "downtime_end", False),
    ]


def test_a_downtime_on_a_constituent_does_not_mute_the_composite() -> None:
    """ "Creating a downtime on an individual monitor A, which is used within a composite monitor, does not mute
    the composite monitor." https://docs.datadoghq.com/monitors/types/composite/"""
    alerting = tuple(Step(t, ALERT if t >= 5 else OK) for t in range(20))
    mute = MuteWindow(0, 30, monitor_key="a")
    constituent = notifications(Run.of("a", alerting, False), {"message": "@pd"}, [mute], 19, set())
    combined = notifications(Run.of("c", alerting, False), {"message": "@pd"}, [mute], 19, set())
    assert [n.muted for n in constituent] == [True] and [n.muted for n in combined] == [False]


def test_below_a_threshold_max_and_min_swap_meanings() -> None:
    """For a below-threshold monitor "the max and min behavior is reversed": max(...) < 1 alerts when every point
    is below 1, min(...) < 1 when any is. https://docs.datadoghq.com/monitors/types/metric/"""
    one_low = series({0: 5.0, 1: 0.0, 2: 5.0}, at_once)
    all_low = series({0: 0.0, 1: 0.0, 2: 0.0}, at_once)
    below_all = monitor("max(last_3m):max:m{queuename:foo} < 1", 0)
    below_any = monitor("min(last_3m):max:m{queuename:foo} < 1", 0)
    assert states(below_all, one_low, 3)[3] == OK and states(below_all, all_low, 3)[3] == ALERT
    assert states(below_any, one_low, 3)[3] == ALERT
