"""Logs Insights as an accelerator: the same failures as FilterLogEvents, whatever the row limit."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from botocore.stub import Stubber

from sync.aws.core.failures import Window
from sync.aws.core.target import TraceTarget
from sync.aws.reads.insights import insights_events, query_string, row_event
from sync.aws.reads.logs import filter_events
from sync.aws.tracing.tracer import Options, engine_for, read_window
from sync.errors import ObsError
from tests.trace.test_trace_moto import NOW, ago, build_every_cause, run_json
from tests.trace.trace_world import World, failure_event, failure_group, sample


def seed(world: World, count: int, *, spacing: timedelta = timedelta(seconds=20)) -> str:
    topic = world.topic("prod-jobs-critical")
    world.enable_logging(topic)
    events = [
        (ago(50) + i * spacing, failure_event("access_denied", message_id=f"m-{i:03d}", topic_arn=topic, queue="q",
                                              published=ago(50) + i * spacing))
        for i in range(count)
    ]  # fmt: skip
    world.put_events(failure_group(topic), events)
    return topic


def test_insights_and_filter_give_the_same_trace(world: World) -> None:
    topic, expected = build_every_cause(world)

    _, by_filter = run_json(world, "--topic", topic, "--since", "1h", "--engine", "filter")
    _, by_insights = run_json(world, "--topic", topic, "--since", "1h", "--engine", "insights")

    assert {f["message_id"] for f in by_insights["failures"]} == set(expected)
    assert by_insights["failures"] == by_filter["failures"]
    assert by_insights["causes"] == by_filter["causes"]


def test_full_answers_are_split_until_nothing_is_truncated(world: World) -> None:
    topic = seed(world, 60)
    group = failure_group(topic)
    clients = world.clients()
    queries: list[str] = []
    clients.logs.meta.events.register("before-call.logs.StartQuery", lambda **kw: queries.append("q"))

    read = list(insights_events(clients, group, ago(60), NOW, limit=7))

    assert sorted(m for m, _ in read) == sorted(m for m, _ in filter_events(clients, group, ago(60), NOW))
    assert len(read) == 60
    assert len(queries) > 60 // 7


def test_a_second_with_more_events_than_the_limit_is_paged_instead(world: World) -> None:
    topic = seed(world, 12, spacing=timedelta(milliseconds=10))
    clients = world.clients()

    read = list(insights_events(clients, failure_group(topic), ago(60), NOW, limit=5))

    assert len(read) == 12


GROUP = "sns/us-east-1/123456789012/t/Failure"
START = datetime(2026, 11, 30, 10, tzinfo=UTC)
QUERY = {"logGroupNames": [GROUP], "startTime": 1796032800, "endTime": 1796036400, "queryString": query_string(),
         "limit": 10_000}  # fmt: skip


def row(message: str, stamp: str = "2026-11-30 10:00:18.000") -> list[dict[str, str]]:
    return [
        {"field": "@timestamp", "value": stamp},
        {"field": "@message", "value": message},
        {"field": "@ptr", "value": "CmAKJwojMTIzNDU2Nzg5MDEyOnNucy91cy1lYXN0LTEvdA"},
    ]


def test_recorded_results_running_then_complete_over_three_pages(world: World) -> None:
    clients = world.clients()
    message = json.dumps(sample("access_denied"))
    naps: list[float] = []
    with Stubber(clients.logs) as stub:
        stub.add_response("start_query", {"queryId": "q-1"}, QUERY)
        stub.add_response("get_query_results", {"status": "Running", "results": []}, {"queryId": "q-1"})
        page = {"status": "Complete", "results": [row(message)], "nextToken": "n1"}
        stub.add_response("get_query_results", page, {"queryId": "q-1"})
        page = {"status": "Complete", "results": [row(message)], "nextToken": "n2"}
        stub.add_response("get_query_results", page, {"queryId": "q-1", "nextToken": "n1"})
        page = {"status": "Complete", "results": [row("last", "2026-11-30 10:59:59.999")]}
        stub.add_response("get_query_results", page, {"queryId": "q-1", "nextToken": "n2"})
        read = list(insights_events(clients, GROUP, START, START + timedelta(hours=1), sleep=naps.append))
        stub.assert_no_pending_responses()
    assert naps == [0.25]
    # an exact repeat is two events, as FilterLogEvents returns it
    assert read == [(message, 1796032818000), (message, 1796032818000), ("last", 1796036399999)]


def test_a_failed_query_is_stopped(world: World) -> None:
    clients = world.clients()
    with Stubber(clients.logs) as stub:
        stub.add_response("start_query", {"queryId": "q-1"}, QUERY)
        stub.add_client_error("get_query_results", "ServiceUnavailableException", "try later")
        stub.add_response("stop_query", {"success": True}, {"queryId": "q-1"})
        with pytest.raises(ObsError, match="ServiceUnavailableException"):
            list(insights_events(clients, GROUP, START, START + timedelta(hours=1)))
        stub.assert_no_pending_responses()


def test_an_interrupted_query_is_stopped_and_a_failed_stop_does_not_hide_why(world: World) -> None:
    clients = world.clients()

    def interrupt(_: float) -> None:
        raise KeyboardInterrupt

    with Stubber(clients.logs) as stub:
        stub.add_response("start_query", {"queryId": "q-1"}, QUERY)
        stub.add_response("get_query_results", {"status": "Running", "results": []}, {"queryId": "q-1"})
        stub.add_client_error("stop_query", "InvalidParameterException", "query already ended")
        with pytest.raises(KeyboardInterrupt):
            list(insights_events(clients, GROUP, START, START + timedelta(hours=1), sleep=interrupt))
        stub.assert_no_pending_responses()


def test_split_windows_drop_only_their_overlap_and_keep_exact_repeats(world: World) -> None:
    topic = world.topic("prod-jobs-critical")
    world.enable_logging(topic)
    twice = failure_event("access_denied", message_id="twice", topic_arn=topic, queue="q", published=ago(30))
    events = [
        (ago(40) + timedelta(seconds=i * 7, milliseconds=250),
         failure_event("access_denied", message_id=f"m-{i:02d}", topic_arn=topic, queue="q", published=ago(40)))
        for i in range(30)
    ] + [(ago(30), twice), (ago(30), twice)]  # fmt: skip
    world.put_events(failure_group(topic), events)
    clients = world.clients()

    by_insights = sorted(insights_events(clients, failure_group(topic), ago(60), NOW, limit=4))
    by_filter = sorted(filter_events(clients, failure_group(topic), ago(60), NOW))

    assert len(by_filter) == 32
    assert by_insights == by_filter


def test_row_fields_as_moto_and_aws_render_them() -> None:
    assert row_event([{"field": "@timestamp", "value": "1796032818000"}, {"field": "@message", "value": "m"}]) == (
        "m",
        1796032818000,
    )
    assert row_event([{"field": "@timestamp", "value": "2026-11-30 10:00:18.250"}])[1] == 1796032818250


def test_auto_engine_uses_insights_only_for_long_windows() -> None:
    assert engine_for("auto", Window(NOW - timedelta(hours=2), NOW)) == "filter"
    assert engine_for("auto", Window(NOW - timedelta(days=2), NOW)) == "insights"
    assert engine_for("filter", Window(NOW - timedelta(days=2), NOW)) == "filter"


def test_auto_falls_back_to_filter_when_insights_is_refused(world: World) -> None:
    topic = seed(world, 3)
    clients = world.clients()
    notes: list[str] = []
    refused: dict[str, Any] = {}

    def refuse(**kwargs: Any) -> None:
        refused.update(kwargs)
        raise clients.logs.exceptions.LimitExceededException(
            {"Error": {"Code": "LimitExceededException", "Message": "too many concurrent queries"}}, "StartQuery"
        )

    clients.logs.meta.events.register("before-call.logs.StartQuery", refuse)
    window = Window(NOW - timedelta(days=1), NOW)
    collector = read_window(clients, TraceTarget(topic), window, frozenset(), Options(), notes, None)

    assert refused
    assert [f.message_id for f in collector.failures()] == ["m-000", "m-001", "m-002"]
    assert notes == [
        "Logs Insights unavailable, read with FilterLogEvents instead: cannot query log group "
        f"{failure_group(topic)} with Logs Insights: LimitExceededException: too many concurrent queries: "
        "check the AWS console or retry"
    ]
