"""The model's pieces for stories that start before minute 0, arrive late, depend on open facts or spread over
tasks: starting states, renotification clocks, arrival gaps, counter units, missing zeros, per-task series."""

from __future__ import annotations

from itertools import pairwise
from typing import Any

import pytest

from sync.core.evaluation import composite, facts, monitor
from sync.core.evaluation.notify import notifications
from sync.core.evaluation.series import Segment, Series, arrivals, gapped, points
from sync.core.evaluation.states import ALERT, OK, Run, Start, Step
from sync.core.evaluation.tasks import Tasks, family, spread

TAGS = {"queuename": "q"}


def _body(query: str = "max(last_5m):max:m{queuename:q} > 10", **options: Any) -> dict[str, Any]:
    return {
        "type": "query alert",
        "query": query,
        "options": {"require_full_window": False, "thresholds": {"critical": 10}, **options},
        "message": "{{#is_alert}}@pd{{/is_alert}}",
    }


def _run(values: dict[int, float], start: Start, **options: Any) -> tuple[Run, tuple[Any, ...]]:
    series = [Series("m", TAGS, values, {m: m for m in values})]
    body = _body(**options)
    run = monitor.run("k", body, series, 120, True, set(), start)
    return run, notifications(run, body, (), 120, set())


def test_a_monitor_alerting_before_minute_0_does_not_alert_again_and_recovers_when_the_data_does() -> None:
    values = {m: (50.0 if m < 30 else 1.0) for m in range(-60, 120)}
    _, sent_fresh = _run(values, Start())
    assert [(n.t, n.kind) for n in sent_fresh][:1] == [(0, "alert")]  # a fresh monitor alerts on the old data
    run, sent = _run(values, Start(ALERT, 10))
    assert run.state_at(-1) == ALERT and run.changes[0][1:] == (ALERT, OK)
    assert [(n.t, n.kind) for n in sent] == [(run.changes[0][0], "recovery")]


@pytest.mark.parametrize(("since", "first"), [(0, 60), (50, 10), (120, 0), (130, 50)])
def test_renotifications_fall_due_on_the_clock_of_an_alert_that_began_before_minute_0(since: int, first: int) -> None:
    values = {m: 50.0 for m in range(-200, 120)}
    _, sent = _run(values, Start(ALERT, since), renotify_interval=60)
    renotified = [n.t for n in sent if n.kind == "renotify"]
    assert renotified[0] == first and all(b - a == 60 for a, b in pairwise(renotified))


def test_renotifications_that_ran_out_before_minute_0_stay_out() -> None:
    values = {m: 50.0 for m in range(-400, 120)}
    _, sent = _run(values, Start(ALERT, 300), renotify_interval=60, renotify_occurrences=2)
    assert [n for n in sent if n.kind == "renotify"] == []
    _, sent = _run(values, Start(ALERT, 90), renotify_interval=60, renotify_occurrences=2)
    assert [n.t for n in sent if n.kind == "renotify"] == [30]  # the second of two, due at -90 + 120


def test_a_composite_starts_where_its_monitors_start() -> None:
    steps = tuple(Step(t, ALERT) for t in range(0, 61))
    a = Run.of("a", steps, False, Start(ALERT, 40))
    b = Run.of("b", steps, False, Start(ALERT, 10))
    both = composite.run("c", {"query": "${monitor_id:a} && ${monitor_id:b}"}, {"a": a, "b": b}, 60, set())
    assert both.start == Start(ALERT, 10)  # together since the later of them began
    assert both.changes == ()
    fresh = Run.of("b", steps, False)
    late = composite.run("c", {"query": "${monitor_id:a} && ${monitor_id:b}"}, {"a": a, "b": fresh}, 60, set())
    assert late.start == Start() and late.changes[0][2] == ALERT


def test_history_before_minute_0_fills_the_first_windows() -> None:
    made = points((Segment(0, 3.0), Segment(10, 0.0)), first=-2880)
    assert min(made) == -2880 and made[-1] == 3.0 and made[5] == 0.0


def test_a_late_gap_arrives_later_and_a_lost_one_never() -> None:
    stamped = {m: float(m) for m in range(10)}
    arrived = arrivals(stamped, 2, False, False, set())
    kept, when = gapped(stamped, arrived, ((3, 5, 30), (7, 9, None)))
    assert when[3] == 35 and when[4] == 36 and when[5] == 7
    assert 7 not in kept and 8 not in kept and 7 not in when and 9 in kept


def test_late_points_count_for_later_windows_that_still_hold_them() -> None:
    values = {m: (50.0 if 20 <= m < 25 else 1.0) for m in range(120)}
    arrived = {m: m + 2 for m in values}
    body = _body("max(last_30m):max:m{queuename:q} > 10")
    for late, alerts_at in ((None, None), (10, 32), (40, None)):
        gaps = ((20, 25, late),)
        kept, when = gapped(values, arrived, gaps)
        run = monitor.run("k", body, [Series("m", TAGS, kept, when)], 120, True, set())
        first = next((t for t, _, now in run.changes if now == ALERT), None)
        # 40 minutes late, the points arrive after every window that holds them has passed: as good as lost.
        assert first == alerts_at


def test_counters_per_second_hold_a_sixtieth_and_zeros_may_be_missing() -> None:
    counts = {0: 60.0, 1: 0.0}
    assert facts.read(facts.PER_SECOND, "aws.sqs.number_of_messages_deleted", counts) == {0: 1.0, 1: 0.0}
    assert facts.read(facts.PER_MINUTE, "aws.sqs.number_of_messages_deleted", counts) == counts
    assert facts.read(facts.PER_SECOND, "aws.sqs.approximate_number_of_messages_visible", counts) == counts
    assert facts.read(facts.NO_ZEROS, "aws.ecs.service.running", counts) == {0: 60.0}
    assert facts.read(facts.ZEROS, "aws.ecs.service.running", counts) == counts
    assert not facts.touches("ecs task counts", "aws.ecs.service.running", {0: 2.0})  # never 0: nothing to miss
    assert facts.polled("aws.ecs.service.desired") and not facts.polled("aws.ecs.service.cpuutilization")


def test_one_task_of_six_shows_in_the_maximum_and_is_diluted_in_the_mean() -> None:
    made = spread("aws.ecs.service.cpuutilization.maximum", {}, {0: 90.0}, Tasks(6, 1, 30.0))
    assert {metric: p[0] for metric, _, p in made} == {
        "aws.ecs.service.cpuutilization": 40.0,
        "aws.ecs.service.cpuutilization.maximum": 90.0,
        "aws.ecs.service.cpuutilization.minimum": 30.0,
    }
    assert family("aws.ecs.service.cpuutilization.minimum")[0] == "aws.ecs.service.cpuutilization"


def test_one_zones_tasks_as_per_task_series() -> None:
    tasks = Tasks(6, 0, 10.0, zones=3, affected_zones=1)
    made = spread("ecs.fargate.cpu.percent", {"region": "us-east-1"}, {0: 100.0}, tasks)
    assert len(made) == 6
    hot = sorted(tags["task_arn"] for _, tags, p in made if p[0] == 100.0)
    assert hot == ["task-1", "task-4"]
    assert {tags["availability_zone"] for _, tags, p in made if p[0] == 100.0} == {"us-east-1a"}
    series = [Series(m, t, {x: p[0] for x in range(60)}, {}) for m, t, p in made]

    def state(space: str) -> str:
        query = f"avg(last_5m):{space}:ecs.fargate.cpu.percent{{region:us-east-1}} > 80"
        return monitor.run("k", _body(query, thresholds={"critical": 80}), series, 59, True, set()).state_at(59)

    avg, peak = state("avg"), state("max")
    assert avg == OK and peak == ALERT


@pytest.mark.parametrize(
    ("tasks", "problem"),
    [
        (Tasks(6, 6, 1.0), "affected must be between 1 and 5"),
        (Tasks(6, 0, 1.0, zones=3, affected_zones=3), "leave a zone unaffected"),
        (Tasks(2, 0, 1.0, zones=3, affected_zones=1), "cannot spread over 3 zones"),
    ],
)
def test_impossible_spreads_are_refused(tasks: Tasks, problem: str) -> None:
    assert problem in tasks.problem()
