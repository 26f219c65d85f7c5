"""The pure core of obs trace: windows, folding, policies, checks, targets, preflight and correlation."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from sync.errors import ObsError
from sync.model import Definitions, PublisherLog
from sync.naming import placed_queues
from sync.trace import causes
from sync.trace.checks import CONFIRMS, CONTRADICTS, INCONCLUSIVE, judge
from sync.trace.correlate import PATTERN_LIMIT, id_batches, or_pattern, parse_publisher_line
from sync.trace.dlq import parse_dlq_message
from sync.trace.failures import Collector, Window
from sync.trace.live import KeyFacts, QueueFacts
from sync.trace.logs import LoggingStatus
from sync.trace.metrics import MetricSummary, clusters, period_for
from sync.trace.placement import resolve_queues, target_from_placed
from sync.trace.policy import key_policy_allows, queue_policy_allows
from sync.trace.preflight import preflight
from sync.trace.target import TraceTarget, parse_duration, target_from_arn, window_bounds
from sync.trace.tracer import metric_gap
from tests.trace.trace_world import failure_event

T0 = datetime(2026, 11, 30, 10, 0, tzinfo=UTC)
TOPIC = "arn:aws:sns:us-east-1:123456789012:prod-jobs-critical"
QUEUE_ARN = "arn:aws:sqs:us-east-1:123456789012:prod-critical"


def ms(moment: datetime) -> int:
    return int(moment.timestamp() * 1000)


def event(message_id: str, published: datetime, queue: str = "prod-critical", **delivery: object) -> str:
    return failure_event(
        "access_denied", message_id=message_id, topic_arn=TOPIC, queue=queue, published=published, **delivery
    )


# --- folding events into failures -------------------------------------------------------------------


def test_window_keeps_what_was_given_up_on_inside_it_and_late_logs_of_its_own_messages() -> None:
    collector = Collector(Window(T0, T0 + timedelta(hours=1)), TOPIC)
    collector.add(event("inside", T0 + timedelta(minutes=5)), ms(T0 + timedelta(minutes=5, seconds=18)))
    collector.add(event("lagged", T0 + timedelta(minutes=59)), ms(T0 + timedelta(minutes=61)))
    collector.add(event("next-window", T0 + timedelta(minutes=61)), ms(T0 + timedelta(minutes=62)))
    collector.add(event("published-before", T0 - timedelta(minutes=3)), ms(T0 + timedelta(seconds=10)))
    assert [f.message_id for f in collector.failures()] == ["published-before", "inside", "lagged"]
    assert collector.tally.outside_window == 1


def test_repeated_events_for_one_message_and_queue_fold_into_one_failure() -> None:
    collector = Collector(Window(T0, T0 + timedelta(hours=1)), TOPIC)
    collector.add(event("m", T0, attempts=1), ms(T0 + timedelta(seconds=20)))
    collector.add(event("m", T0, attempts=3, statusCode=500), ms(T0 + timedelta(minutes=2)))
    collector.add(event("m", T0, queue="prod-other"), ms(T0 + timedelta(seconds=20)))
    failures = collector.failures()
    assert [(f.queue, f.events, f.attempts, f.status_code) for f in failures] == [
        ("prod-critical", 2, 3, 500),
        ("prod-other", 1, 1, 403),
    ]


def test_events_without_ids_are_kept_apart() -> None:
    collector = Collector(Window(T0, T0 + timedelta(hours=1)), TOPIC)
    bare = '{"delivery": {"destination": "%s", "providerResponse": "{\\"ErrorCode\\":\\"AccessDenied\\"}"}}'
    collector.add(bare % QUEUE_ARN, ms(T0 + timedelta(minutes=1)))
    collector.add(bare % QUEUE_ARN, ms(T0 + timedelta(minutes=2)))
    assert len(collector.failures()) == 2


def test_failures_sort_by_cause_rank_then_queue_then_time() -> None:
    collector = Collector(Window(T0, T0 + timedelta(hours=1)), TOPIC)
    unknown = failure_event("unknown", message_id="u", topic_arn=TOPIC, queue="a", published=T0)
    collector.add(unknown, ms(T0 + timedelta(minutes=1)))
    collector.add(event("late", T0 + timedelta(minutes=9), queue="b"), ms(T0 + timedelta(minutes=10)))
    collector.add(event("early", T0 + timedelta(minutes=2), queue="b"), ms(T0 + timedelta(minutes=10)))
    collector.add(event("z", T0 + timedelta(minutes=1), queue="a"), ms(T0 + timedelta(minutes=10)))
    assert [f.message_id for f in collector.failures()] == ["z", "early", "late", "u"]


# --- policies and live checks -------------------------------------------------------------------------


def statement(**extra: object) -> dict[str, object]:
    return {
        "Effect": "Allow",
        "Principal": {"Service": "sns.amazonaws.com"},
        "Action": "sqs:SendMessage",
        "Resource": QUEUE_ARN,
        **extra,
    }


def policy(*statements: dict[str, object]) -> str:
    return json.dumps({"Version": "2012-10-17", "Statement": list(statements)})


@pytest.mark.parametrize(
    ("text", "allows"),
    [
        ("", False),
        (policy(statement()), True),
        (policy(statement(Condition={"ArnEquals": {"aws:SourceArn": TOPIC}})), True),
        (policy(statement(Condition={"ArnLike": {"aws:SourceArn": "arn:aws:sns:*:123456789012:prod-*"}})), True),
        (policy(statement(Condition={"ArnEquals": {"aws:SourceArn": TOPIC + "-other"}})), False),
        (policy(statement(Action="SQS:*")), True),
        (policy(statement(Principal="*")), True),
        (policy(statement(Principal={"AWS": "arn:aws:iam::123456789012:root"})), False),
        (policy(statement(Resource="arn:aws:sqs:us-east-1:123456789012:prod-other")), False),
        (policy(statement(), statement(Effect="Deny")), False),
        (policy(statement(Condition={"IpAddress": {"aws:SourceIp": "10.0.0.0/8"}})), None),
        (policy(statement(Condition={"StringEquals": {"aws:SourceAccount": "123456789012"}})), True),
        ("not json", False),
    ],
)
def test_queue_policy_evaluation(text: str, allows: bool | None) -> None:
    assert queue_policy_allows(text, QUEUE_ARN, TOPIC).allows is allows


def test_key_policy_needs_both_generate_data_key_and_decrypt_for_sns() -> None:
    both = {"Effect": "Allow", "Principal": {"Service": "sns.amazonaws.com"}, "Resource": "*"}
    assert key_policy_allows(policy({**both, "Action": ["kms:GenerateDataKey*", "kms:Decrypt"]}), TOPIC).allows
    verdict = key_policy_allows(policy({**both, "Action": "kms:Decrypt"}), TOPIC)
    assert verdict.allows is False
    assert "kms:GenerateDataKey" in verdict.reason


def facts(**values: Any) -> QueueFacts:
    return replace(QueueFacts(queue="prod-critical", exists=True), **values)


@pytest.mark.parametrize(
    ("cause", "queue", "outcome"),
    [
        (causes.QUEUE_POLICY, facts(policy=policy(statement())), CONTRADICTS),
        (causes.QUEUE_POLICY, facts(policy=""), CONFIRMS),
        (causes.QUEUE_DELETED, facts(exists=False), CONFIRMS),
        (causes.QUEUE_DELETED, facts(), CONTRADICTS),
        (causes.QUEUE_POLICY, facts(exists=False), INCONCLUSIVE),
        (causes.QUEUE_POLICY, facts(exists=None, unread="AccessDenied"), INCONCLUSIVE),
        (causes.KMS_ACCESS, facts(key=KeyFacts("alias/aws/sqs", manager="AWS", state="Enabled")), CONFIRMS),
        (causes.KMS_ACCESS, facts(), CONTRADICTS),
        (causes.KMS_ACCESS, facts(key=KeyFacts("k", manager="CUSTOMER", state="Enabled", policy="")), CONFIRMS),
        (causes.KMS_ACCESS, facts(key=KeyFacts("k", unread="kms:DescribeKey failed")), INCONCLUSIVE),
        (causes.KMS_DISABLED, facts(key=KeyFacts("k", state="PendingDeletion")), CONFIRMS),
        (causes.KMS_DISABLED, facts(key=KeyFacts("k", state="Enabled")), CONTRADICTS),
        (causes.KMS_NOT_FOUND, facts(key=KeyFacts("k", state="NotFound")), CONFIRMS),
    ],
)
def test_live_checks(cause: str, queue: QueueFacts, outcome: str) -> None:
    check = judge(cause, queue, QUEUE_ARN, TOPIC)
    assert check is not None
    assert check.outcome == outcome


def test_causes_without_live_evidence_are_not_checked() -> None:
    assert judge(causes.DATA_PROTECTION, facts(), QUEUE_ARN, TOPIC) is None


# --- targets, windows, preflight -------------------------------------------------------------------------


def test_topic_arn_gives_region_account_and_log_groups() -> None:
    target = target_from_arn("arn:aws:sns:eu-west-1:333333333333:dev-orders.fifo")
    assert (target.region, target.account_id, target.topic_name) == ("eu-west-1", "333333333333", "dev-orders.fifo")
    assert target.failure_log_group == "sns/eu-west-1/333333333333/dev-orders.fifo/Failure"


@pytest.mark.parametrize("text", ["arn:aws:sqs:us-east-1:123456789012:q", "arn:aws:sns:us-east-1:12:t", "jobs"])
def test_bad_topic_arns_are_refused(text: str) -> None:
    with pytest.raises(ObsError, match="is not an SNS topic ARN"):
        target_from_arn(text)


@pytest.mark.parametrize(
    ("text", "expected"),
    [("90s", timedelta(seconds=90)), ("15m", timedelta(minutes=15)), ("1h30m", timedelta(minutes=90)),
     ("2d", timedelta(days=2)), ("1w", timedelta(weeks=1))],
)  # fmt: skip
def test_durations(text: str, expected: timedelta) -> None:
    assert parse_duration(text) == expected


@pytest.mark.parametrize("text", ["", "1", "h", "1y", "0m", "-5m", "1h foo"])
def test_bad_durations(text: str) -> None:
    with pytest.raises(ObsError, match="--since"):
        parse_duration(text)


def test_window_bounds() -> None:
    assert window_bounds("2h", None, None, T0) == (T0 - timedelta(hours=2), T0)
    assert window_bounds(None, None, None, T0) == (T0 - timedelta(hours=1), T0)
    assert window_bounds(None, "2026-11-30T08:00:00Z", None, T0) == (T0 - timedelta(hours=2), T0)
    with pytest.raises(ObsError, match="cannot be combined"):
        window_bounds("1h", "2026-11-30T08:00:00Z", None, T0)
    with pytest.raises(ObsError, match="is not after"):
        window_bounds(None, "2026-11-30T10:00:00Z", "2026-11-30T09:00:00Z", T0)
    with pytest.raises(ObsError, match="--end needs --start"):
        window_bounds(None, None, "2026-11-30T09:00:00Z", T0)
    with pytest.raises(ObsError, match="--start 'soon' is not a time"):
        window_bounds(None, "soon", None, T0)


def test_preflight_decisions() -> None:
    target = TraceTarget(TOPIC)
    on = preflight(LoggingStatus("arn:role", "", "", failure_group_exists=True), target)
    assert (on.read, on.logging_on, on.notes) == (True, True, ())
    quiet = preflight(LoggingStatus("arn:role", "", "", failure_group_exists=False), target)
    assert (quiet.read, quiet.logging_on) == (False, True)
    stale = preflight(LoggingStatus("", "", "", failure_group_exists=True), target)
    assert (stale.read, stale.logging_on) == (True, False)
    with pytest.raises(ObsError, match="not enabled") as caught:
        preflight(LoggingStatus("", "", "", failure_group_exists=False), target)
    assert "set-topic-attributes" in str(caught.value)


def test_env_topic_by_logical_or_physical_name_carries_queues_dlqs_and_publisher(example: Definitions) -> None:
    queues = placed_queues(example, "prod")
    by_logical = target_from_placed(queues, "prod", "jobs-critical")
    assert target_from_placed(queues, "prod", "prod-jobs-critical") == by_logical
    assert by_logical.topic_arn == "arn:aws:sns:us-east-1:111111111111:prod-jobs-critical"
    assert [(d.logical, d.queue, d.subscription_dlq) for d in by_logical.destinations] == [
        ("critical", "prod-critical", "prod-jobs-critical-undeliverable")
    ]
    assert by_logical.publishers == (PublisherLog("/ecs/prod/api", "sns_message_id", "job_id"),)
    assert resolve_queues(by_logical, ["critical", "other-queue"]) == frozenset({"prod-critical", "other-queue"})


def test_env_topic_arn_unknown_to_the_definitions_is_still_traced(example: Definitions) -> None:
    target = target_from_placed(placed_queues(example, "prod"), "prod", TOPIC)
    assert target == TraceTarget(TOPIC)


# --- correlation ----------------------------------------------------------------------------------------


def test_publisher_lines_with_prefixes_nested_fields_and_noise() -> None:
    spec = PublisherLog("/ecs/prod/api", "sns.message_id", "job.id")
    assert parse_publisher_line('INFO {"sns": {"message_id": "m-1"}, "job": {"id": 42}}', spec) == ("m-1", "42")
    assert parse_publisher_line('{"sns": {"message_id": "m-1"}}', spec) == ("m-1", "")
    assert parse_publisher_line('{"sns": {}}', spec) is None
    assert parse_publisher_line("plain text", spec) is None
    assert parse_publisher_line("{broken", spec) is None


def test_id_batches_fit_the_filter_pattern_limit_and_keep_time_order() -> None:
    timed = [(T0 + timedelta(seconds=i), f"{i:08d}-3022-50d3-8b55-d784f706e076") for i in range(100)]
    batches = id_batches(timed)
    assert [ident for batch in batches for _, ident in batch] == [ident for _, ident in timed]
    assert all(len(or_pattern(ident for _, ident in batch)) <= PATTERN_LIMIT for batch in batches)
    assert [len(batch) for batch in batches] == [25, 25, 25, 25]  # 40 characters a term


def test_dlq_envelope_gives_sns_id_and_body_raw_gives_body_only() -> None:
    envelope = json.dumps({"Type": "Notification", "MessageId": "m-1", "Message": '{"job_id": 1}'})
    fifo = {"MessageGroupId": "tenant-7", "MessageDeduplicationId": "d-1"}
    parked = parse_dlq_message("dlq", envelope, fifo)
    assert (parked.sns_message_id, parked.body, parked.group_id, parked.deduplication_id) == (
        "m-1",
        '{"job_id": 1}',
        "tenant-7",
        "d-1",
    )
    raw = parse_dlq_message("dlq", '{"job_id": 1}', {})
    assert (raw.sns_message_id, raw.body) == ("", '{"job_id": 1}')


def test_metric_period_stays_one_minute_for_a_day_and_widens_beyond() -> None:
    assert period_for(T0, T0 + timedelta(hours=2)) == 60
    assert period_for(T0, T0 + timedelta(hours=23)) == 60
    assert period_for(T0, T0 + timedelta(days=3)) == 240


def test_metric_points_bunch_into_clusters_of_consecutive_periods() -> None:
    points = tuple((T0 + timedelta(minutes=m), v) for m, v in [(1, 1.0), (2, 3.0), (3, 1.0), (9, 2.0), (10, 1.0)])
    found = clusters(points, 60)
    assert [(c.start.minute, c.last.minute, c.total, c.peak) for c in found] == [(1, 3, 5.0, 3.0), (9, 10, 3.0, 2.0)]
    assert clusters((), 60) == ()


def test_more_failures_counted_than_logged_is_pointed_out() -> None:
    metrics = MetricSummary(60, ((T0, 5.0),), ())
    assert metric_gap(metrics, 5) == []
    (note,) = metric_gap(metrics, 3)
    assert note.startswith("CloudWatch counted 5 failed deliveries but the Failure log names 3")
