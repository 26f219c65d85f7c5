"""What the report counts, from runs made by hand: alerts, flaps, the longest alert, minutes in ALERT, and
pages of one queue grouped into incidents."""

from __future__ import annotations

from sync.core.backtest.compare import compare
from sync.core.backtest.replay import Replay, Replayed, Setup
from sync.core.backtest.summary import FLAP_MINUTES, INCIDENT_GAP, incidents, stats
from sync.core.evaluation.audience import Audience
from sync.core.evaluation.notify import Notification
from sync.core.evaluation.states import ALERT, OK, Run, Step

PAGE = "@pagerduty-x"
AUDIENCE = Audience(frozenset({PAGE}), frozenset({"@slack-x"}))


def _replayed(key: str, queue: str, alerts: list[tuple[int, int]]) -> Replayed:
    steps = []
    for start, end in alerts:
        steps += [Step(start, ALERT), Step(end, OK)]
    sent = tuple(Notification(start, "alert", ALERT, frozenset({PAGE})) for start, _ in alerts)
    return Replayed(key, queue, Run.of(key, tuple(steps), False), sent, {"latest": len(alerts), "earliest": 1})


def _replay(*items: Replayed, warmup: int = 0) -> Replay:
    setup = Setup({i.key: {} for i in items}, {i.key: i.queue for i in items}, AUDIENCE, 5000, warmup=warmup)
    return Replay(setup, items, (), ("latest", "earliest"), ())


def test_alerts_flaps_and_the_longest_alert() -> None:
    item = _replayed("e/q/age", "q", [(100, 130), (130 + FLAP_MINUTES, 300), (1000, 1010)])
    found = stats(_replay(item), item)
    assert (found.alerts, found.flaps, found.alert_minutes) == (3, 1, 30 + 300 - 190 + 10)
    assert found.longest == (190, 110)
    assert (found.pages, found.pages_range) == (3, (1, 3))


def test_an_alert_open_at_the_end_of_the_warmup_counts_from_the_period_start() -> None:
    item = _replayed("e/q/age", "q", [(10, 400)])
    found = stats(_replay(item, warmup=360), item)
    assert (found.alerts, found.alert_minutes, found.longest) == (1, 40, (360, 40))


def test_pages_of_one_queue_close_in_time_are_one_incident() -> None:
    a = _replayed("e/q/age", "q", [(100, 120), (110 + INCIDENT_GAP + 1, 300)])  # 110: the page of e/q/dlq
    b = _replayed("e/q/dlq", "q", [(110, 115)])
    other = _replayed("e/r/age", "r", [(105, 120)])
    found = incidents(_replay(a, b, other))
    assert [(i.queue, i.start, i.end, i.pages, i.monitors) for i in found] == [
        ("q", 100, 110, 2, ("e/q/age", "e/q/dlq")),
        ("r", 105, 105, 1, ("e/r/age",)),
        ("q", 171, 171, 1, ("e/q/age",)),
    ]


def test_the_comparison_names_incidents_gone_and_new() -> None:
    base = _replay(_replayed("e/q/age", "q", [(100, 120), (2000, 2010)]))
    head = _replay(_replayed("e/q/age", "q", [(130, 140)]), _replayed("e/r/age", "r", [(3000, 3010)]))
    found = compare(base, head)
    assert (found.base_pages, found.head_pages) == (2, 2)
    assert [i.start for i in found.gone] == [2000]
    assert [(i.queue, i.start) for i in found.new] == [("r", 3000)]
