"""The pure core of obs trace: windows, folding, policies, checks, targets, preflight and correlation."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from sync.aws.core import causes
from sync.aws.core.checks import CONFIRMS, CONTRADICTS, INCONCLUSIVE, judge
from sync.aws.core.coverage import metric_gap, recent_note, retried_note
from sync.aws.core.dlq import parse_dlq_message
from sync.aws.core.facts import KeyFacts, LoggingStatus, QueueFacts
from sync.aws.core.failures import Collector, Window
from sync.aws.core.metrics import MetricSummary, clusters, period_for
from sync.aws.core.policy import key_policy_allows, queue_policy_allows
from sync.aws.core.preflight import preflight
from sync.aws.core.publisher import PATTERN_LIMIT, id_batches, or_pattern, parse_publisher_line
from sync.aws.core.target import TraceTarget, parse_duration, target_from_arn, window_bounds
from sync.aws.tracing.resolve import resolve_queues, target_from_placed
from sync.definitions.model import Definitions, PublisherLog
from sync.errors import ObsError
from sync.expand.naming import placed_queues
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


def without(statement: dict[str, object], key: str) -> dict[str, object]:
    return {k: v for k, v in statement.items() if k != key}


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
        # a Deny obs cannot evaluate may well deny: never "allows"
        (policy(statement(), statement(Effect="Deny", Condition={"ArnNotEquals": {"aws:SourceArn": TOPIC}})), None),
        (
            policy(statement(), statement(Effect="Deny", Condition={"StringNotEquals": {"aws:SourceAccount": "1"}})),
            None,
        ),
        (policy(statement(), {"Effect": "Deny", "NotPrincipal": {"AWS": "arn:aws:iam::1:root"}, "Action": "*"}), None),
        (policy(without(statement(), "Action") | {"NotAction": "sqs:DeleteMessage"}), None),
        (policy(statement(), without(statement(Effect="Deny"), "Resource") | {"NotResource": QUEUE_ARN}), None),
        # an Allow obs cannot evaluate next to a plain Allow cannot take the permission away
        (policy(statement(), statement(Condition={"IpAddress": {"aws:SourceIp": "10.0.0.0/8"}})), True),
    ],
)
def test_queue_policy_evaluation(text: str, allows: bool | None) -> None:
    assert queue_policy_allows(text, QUEUE_ARN, TOPIC).allows is allows


def test_opt_in_regions_need_the_regional_sns_principal() -> None:
    hk_topic, hk_queue = TOPIC.replace("us-east-1", "ap-east-1"), QUEUE_ARN.replace("us-east-1", "ap-east-1")
    regional = {**statement(Resource=hk_queue), "Principal": {"Service": "sns.ap-east-1.amazonaws.com"}}
    assert queue_policy_allows(policy(regional), hk_queue, hk_topic).allows is True
    verdict = queue_policy_allows(policy(statement(Resource=hk_queue)), hk_queue, hk_topic)
    assert (verdict.allows, verdict.reason) == (
        False,
        f"the queue policy does not allow sns.ap-east-1.amazonaws.com sqs:SendMessage from {hk_topic}",
    )


def test_a_topic_in_a_default_region_reaches_an_opt_in_queue_as_the_queue_region_principal() -> None:
    hk_queue = QUEUE_ARN.replace("us-east-1", "ap-east-1")
    regional = {**statement(Resource=hk_queue), "Principal": {"Service": "sns.ap-east-1.amazonaws.com"}}
    assert queue_policy_allows(policy(regional), hk_queue, TOPIC).allows is True
    verdict = queue_policy_allows(policy(statement(Resource=hk_queue)), hk_queue, TOPIC)
    assert (verdict.allows, verdict.reason) == (
        False,
        f"the queue policy does not allow sns.ap-east-1.amazonaws.com sqs:SendMessage from {TOPIC}",
    )


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


@pytest.mark.parametrize(
    ("text", "flag", "error"),
    [("", "--since", "'' is not a duration"), ("1", "--since", "'1' is not a duration"),
     ("h", "--slack", "'h' is not a duration"), ("1y", "--since", "'1y' is not a duration"),
     ("5x", "--slack", "'5x' is not a duration"), ("0m", "--since", "'0m' is empty"),
     ("-5m", "--slack", "'-5m' is not a duration"), ("1h foo", "--since", "'1h foo' is not a duration"),
     ("367d", "--since", "'367d' is longer than 366 days"),
     ("99999999999d", "--since", "'99999999999d' is longer than 366 days"),
     ("9" * 5000 + "s", "--slack", "is longer than 366 days")],
)  # fmt: skip
def test_bad_durations_name_their_flag(text: str, flag: str, error: str) -> None:
    with pytest.raises(ObsError) as caught:
        parse_duration(text, flag, allow_zero=flag == "--slack")
    assert str(caught.value).startswith(f"{flag} ")
    assert error in str(caught.value)


def test_slack_may_be_zero_and_a_year_is_the_longest_duration() -> None:
    assert parse_duration("0m", "--slack", allow_zero=True) == timedelta()
    assert parse_duration("366d") == timedelta(days=366)


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
    queues = placed_queues(example, example.environment("prod"))
    by_logical = target_from_placed(queues, "prod", "jobs-critical")
    assert target_from_placed(queues, "prod", "prod-jobs-critical") == by_logical
    assert by_logical.topic_arn == "arn:aws:sns:us-east-1:111111111111:prod-jobs-critical"
    assert [(d.logical, d.queue, d.subscription_dlq) for d in by_logical.destinations] == [
        ("critical", "prod-critical", "prod-jobs-critical-undeliverable")
    ]
    assert by_logical.publishers == (PublisherLog("/ecs/prod/api", "sns_message_id", "job_id"),)
    assert resolve_queues(by_logical, ["critical", "other-queue"]) == frozenset({"prod-critical", "other-queue"})


def test_env_topic_arn_unknown_to_the_definitions_is_still_traced(example: Definitions) -> None:
    target = target_from_placed(placed_queues(example, example.environment("prod")), "prod", TOPIC)
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


def test_metric_period_is_the_finest_cloudwatch_still_keeps_for_the_window_start() -> None:
    assert period_for(T0 - timedelta(hours=23), T0) == 60
    assert period_for(T0 - timedelta(days=1), T0) == 60
    assert period_for(T0 - timedelta(days=15), T0) == 60
    assert period_for(T0 - timedelta(days=15, minutes=1), T0) == 300
    assert period_for(T0 - timedelta(days=63), T0) == 300
    assert period_for(T0 - timedelta(days=64), T0) == 3600


def test_metric_points_bunch_into_clusters_of_consecutive_periods() -> None:
    points = tuple((T0 + timedelta(minutes=m), v) for m, v in [(1, 1.0), (2, 3.0), (3, 1.0), (9, 2.0), (10, 1.0)])
    found = clusters(points, 60)
    assert [(c.start.minute, c.last.minute, c.total, c.peak) for c in found] == [(1, 3, 5.0, 3.0), (9, 10, 3.0, 2.0)]
    assert clusters((), 60) == ()


def test_more_failures_counted_than_logged_is_pointed_out_saying_what_is_compared() -> None:
    metrics = MetricSummary(60, ((T0, 5.0),), ())
    assert metric_gap(metrics, 5, 0) == []
    assert metric_gap(metrics, 3, 2) == []  # the metric counts every protocol
    (note,) = metric_gap(metrics, 2, 1)
    assert note.startswith(
        "NumberOfNotificationsFailed counted 5 for the topic (every protocol; HTTP/S counts each failed attempt, "
        "SQS each message SNS gave up on) but the Failure log holds 2 failed SQS deliveries and 1 failure events "
        "to other protocols"
    )


def test_a_window_reaching_the_last_minute_says_failures_may_not_be_logged_yet() -> None:
    assert recent_note(Window(T0 - timedelta(hours=1), T0), T0) == [
        "the window reaches the last minute: failures in the last minute may not be logged yet"
    ]
    assert recent_note(Window(T0 - timedelta(hours=1), T0 - timedelta(seconds=30), timedelta()), T0) != []
    assert recent_note(Window(T0 - timedelta(hours=1), T0 - timedelta(minutes=2)), T0) == []
    assert recent_note(Window(T0 - timedelta(hours=1), T0 - timedelta(minutes=5), timedelta()), T0) == []


def test_retried_causes_warn_that_they_are_logged_late() -> None:
    collector = Collector(Window(T0, T0 + timedelta(hours=1)), TOPIC)
    collector.add(event("denied", T0), ms(T0 + timedelta(seconds=20)))
    assert retried_note(collector.failures()) == []
    throttled = failure_event("kms_throttled", message_id="t", topic_arn=TOPIC, queue="q", published=T0)
    collector.add(throttled, ms(T0 + timedelta(seconds=20)))
    (note,) = retried_note(collector.failures())
    assert note.startswith("KMS throttled: SNS retries these and logs a failure only when it gives up, up to 23 days")
