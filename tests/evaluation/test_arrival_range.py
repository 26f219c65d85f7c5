"""The arrival range: every expectation holds at the earliest, middle and latest arrival its sources allow, and
renotifications count as pages unless the incident is still open."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sync.core.evaluation import notes
from sync.core.evaluation.audience import Audience
from sync.core.evaluation.expect import Expectation
from sync.core.evaluation.series import ARRIVALS, Series, arrivals, five_minute
from sync.core.evaluation.simulate import Case, simulate

TAGS = {"queuename": "q"}
PAGE = Audience(frozenset({"@pd"}), frozenset({"@chat"}))


def _monitor(query: str, **options: Any) -> dict[str, Any]:
    defaults: dict[str, Any] = {"require_full_window": False, "thresholds": {"critical": 10}}
    return {
        "type": "query alert",
        "query": query,
        "options": {**defaults, **options},
        "message": "{{#is_alert}}@pd{{/is_alert}}",
        "tags": ["queue:q"],
    }


def _case(values: Mapping[int, float], body: dict[str, Any], *expect: Expectation, **kw: Any) -> Case:
    """The values as they arrive at each point of the crawler's range."""
    read = tuple(
        (a.name, (Series("age", TAGS, dict(values), arrivals(values, a.crawler, True, False, set(), a.wake)),))
        for a in ARRIVALS
    )
    return Case(
        scenario="s",
        env="e",
        incident_at=0,
        duration=kw.pop("duration", 60),
        series=read[-1][1],
        monitors={"e/q/age": body},
        expectations=expect,
        audience=kw.pop("audience", PAGE),
        arrivals=read,
    )


def test_a_spike_missed_at_the_latest_arrival_still_pages_at_the_earliest() -> None:
    # One breaching minute, a one-minute window 15 minutes behind: a point that arrives 17 minutes late is
    # never seen, one that arrives 2 minutes late is. "Never pages" must fail.
    spike = {m: (50.0 if m == 10 else 1.0) for m in range(60)}
    body = _monitor("max(last_1m):max:age{queuename:q} > 10", evaluation_delay=900)
    result = simulate(_case(spike, body, Expectation("age", ("e/q/age",), "pages_count", count=0)))
    (verdict,) = result.verdicts
    assert not verdict.passed
    assert verdict.failed_reading == "window end open, earliest arrival"
    assert verdict.checks["window end open, latest arrival"].passed
    assert len(verdict.checks) == 6  # two window edges x three arrivals


def test_pages_within_is_judged_at_the_latest_arrival() -> None:
    # A step at minute 10 with a 5-minute window 15 minutes behind: the page comes at 26 (open end) at the
    # earliest arrival and no sooner than the point's arrival at 27 at the latest.
    step = {m: (50.0 if m >= 10 else 1.0) for m in range(60)}
    body = _monitor("max(last_5m):max:age{queuename:q} > 10", evaluation_delay=900)
    in_time = Expectation("age", ("e/q/age",), "pages_within", within=27)
    too_tight = Expectation("age", ("e/q/age",), "pages_within", within=26)
    good, tight = simulate(_case(step, body, in_time, too_tight)).verdicts
    assert good.passed and good.latest("page") == 27
    assert not tight.passed and tight.failed_reading.endswith("latest arrival")


def test_a_waking_queue_reports_its_first_points_late_by_up_to_the_wake_delay() -> None:
    values = {m: 1.0 for m in range(400, 420)}
    values[0] = 1.0  # then six idle hours: minute 400 wakes the queue
    late = arrivals(values, 17, True, False, set(), wake=15)
    early = arrivals(values, 2, True, False, set(), wake=0)
    assert late[400] == 400 + 17 + 15 and late[415] == 415 + 17
    assert early[400] == 402
    assert arrivals(values, 2, False, False, set(), wake=15)[400] == 402  # only SQS queues sleep


def test_five_minute_periods_sum_counters_and_average_the_rest() -> None:
    minutes = {0: 1.0, 1: 2.0, 4: 3.0, 5: 10.0, 12: 4.0}
    assert five_minute(minutes, summed=True) == {0: 6.0, 5: 10.0, 10: 4.0}
    assert five_minute(minutes, summed=False) == {0: 2.0, 5: 10.0, 10: 4.0}


def test_renotifications_page_unless_the_incident_is_still_open() -> None:
    stuck = {m: 50.0 for m in range(200)}
    body = _monitor("max(last_5m):max:age{queuename:q} > 10", evaluation_delay=900, renotify_interval=60)
    once = Expectation("age", ("e/q/age",), "pages_count", count=1)
    resolved = simulate(_case(stuck, body, once, duration=150))
    (verdict,) = resolved.verdicts
    assert not verdict.passed and verdict.detail.startswith("paged 3 times")  # the alert, then at +60 and +120
    kept_open = Audience(PAGE.page, PAGE.chat, incident_open=True)
    assert simulate(_case(stuck, body, once, duration=150, audience=kept_open)).passed
    assert notes.RENOTIFY in resolved.assumptions
