"""obs trace end to end against moto: every cause, noise, pagination, preflight and AWS errors."""

from __future__ import annotations

import argparse
import io
import json
import uuid
from datetime import UTC, datetime, timedelta
from functools import partial
from typing import Any

import pytest
from botocore.stub import Stubber

from sync.aws.core.failures import Window
from sync.aws.core.target import TraceTarget
from sync.aws.reads.logs import filter_events, read_failures
from sync.cli.app import main
from sync.cli.conventions import Exit
from sync.cli.trace import execute, progress_lines, register
from sync.errors import ObsError
from tests.trace.trace_world import ACCOUNT, REGION, World, failure_event, failure_group, sample, success_group

NOW = datetime.now(UTC).replace(microsecond=0)
TOPIC = "prod-jobs-critical"
LAMBDA = f"arn:aws:lambda:{REGION}:{ACCOUNT}:function:resize"
HOOK = "https://hook-user:hook-s3cret@hooks.example.com/sns"  # an HTTP endpoint may carry credentials


def parse(*argv: str, definitions: str = "") -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="obs")
    register(parser.add_subparsers())
    args = parser.parse_args(["trace", *argv])
    args.definitions = definitions or None
    return args


def run(world: World, *argv: str) -> tuple[int, str]:
    out = io.StringIO()
    code = execute(parse(*argv), world.clients, now=NOW, out=out, err=io.StringIO())
    return code, out.getvalue()


def run_json(world: World, *argv: str) -> tuple[int, dict[str, Any]]:
    code, text = run(world, *argv, "--format", "json")
    return code, json.loads(text)


def ago(minutes: float) -> datetime:
    return NOW - timedelta(minutes=minutes)


def build_every_cause(world: World) -> tuple[str, dict[str, str]]:
    """A topic feeding seven queues that each fail differently, and its Failure log; returns id -> cause."""
    topic = world.topic(TOPIC)
    world.enable_logging(topic)
    dlq = world.queue("prod-critical-undeliverable")
    world.subscribe(topic, world.queue("prod-critical"), dlq_arn=dlq)  # no policy: SNS is denied
    world.subscribe(topic, world.queue("prod-kms", KmsMasterKeyId="alias/aws/sqs"))
    key = world.kms.create_key(Description="billing")["KeyMetadata"]["KeyId"]
    world.kms.disable_key(KeyId=key)
    world.subscribe(topic, world.queue("prod-billing", KmsMasterKeyId=key))
    world.subscribe(topic, world.queue("prod-raw"), raw=True)
    world.subscribe(topic, world.queue("prod-pii"))
    world.subscribe(topic, world.queue("prod-weird"))
    cases = [
        ("access_denied", "prod-critical", "queue-policy", 50),
        ("access_denied", "prod-critical", "queue-policy", 45),
        ("kms_access_denied", "prod-kms", "kms-access", 40),
        ("queue_deleted", "prod-gone", "queue-deleted", 35),
        ("kms_disabled", "prod-billing", "kms-disabled", 30),
        ("kms_throttled", "prod-billing", "kms-throttled", 25),
        ("too_many_attributes", "prod-raw", "too-many-attributes", 20),
        ("data_protection", "prod-pii", "data-protection", 15),
        ("unknown", "prod-weird", "unknown", 10),
    ]
    expected: dict[str, str] = {}
    events: list[tuple[datetime, str]] = []
    for name, queue, cause, minutes in cases:
        ident = str(uuid.uuid4())
        expected[ident] = cause
        message = failure_event(name, message_id=ident, topic_arn=topic, queue=queue, published=ago(minutes))
        events.append((ago(minutes) + timedelta(seconds=18), message))
    first = next(iter(expected))  # SNS may log the same message twice; it is one failure
    again = failure_event(
        "access_denied", message_id=first, topic_arn=topic, queue="prod-critical", published=ago(50), attempts=2
    )
    events.append((ago(49), again))
    # published after the window ends, logged within its slack: belongs to the next window
    late = failure_event(
        "access_denied", message_id="late-1", topic_arn=topic, queue="prod-critical", published=ago(-1)
    )
    other = failure_event(
        "access_denied", message_id="other-1", topic_arn=topic + "-x", queue="prod-critical", published=ago(5)
    )
    success = json.dumps(sample("success"), separators=(",", ":"))
    # SNS logs every protocol's failures to the same group: these are not SQS deliveries
    for ident, endpoint in [("lambda-1", LAMBDA), ("http-1", HOOK)]:
        doc = json.loads(failure_event("unknown", message_id=ident, topic_arn=topic, queue="x", published=ago(12)))
        doc["delivery"]["destination"] = endpoint
        events.append((ago(12), json.dumps(doc, separators=(",", ":"))))
    events += [
        (ago(-2), late),
        (ago(5), other),
        (ago(4), success),
        (ago(3), "START RequestId: not a delivery event"),
        (ago(2), '{"level":"info","msg":"unrelated"}'),
    ]
    half = len(events) // 2  # two streams, as SNS writes from several hosts
    world.put_events(failure_group(topic), events[:half])
    world.put_events(failure_group(topic), events[half:])
    world.put_events(success_group(topic), [(ago(4), success)])
    return topic, expected


def test_trace_names_exactly_the_failed_messages_with_their_causes(world: World) -> None:
    topic, expected = build_every_cause(world)
    world.put_failed_metric(TOPIC, [(ago(50), 2), (ago(35), 1), (ago(10), 6)])

    code, doc = run_json(world, "--topic", topic, "--since", "1h")

    assert code == Exit.FOUND
    assert {f["message_id"]: f["cause"] for f in doc["failures"]} == expected
    assert doc["failed"] == len(expected)
    assert doc["read"] == {
        "events": 17,
        "failed_events": 14,
        "successes": 1,
        "noise": 2,
        "outside_window": 1,
        "other_queue": 0,
        "other_topic": 1,
        "other_protocol": 2,
        "malformed_sqs": 0,
    }
    first = next(f for f in doc["failures"] if f["message_id"] == next(iter(expected)))
    assert (first["events"], first["attempts"], first["queue"]) == (2, 2, "prod-critical")
    assert doc["metrics"]["failed_total"] == 9
    assert [p["sum"] for p in doc["metrics"]["failed"]] == [2, 1, 6]
    checks = {(c["cause"], c["queue"]): [k["outcome"] for k in c["checks"]] for c in doc["causes"]}
    assert checks == {
        ("data-protection", "prod-pii"): [],
        ("kms-access", "prod-kms"): ["confirms"],
        ("kms-disabled", "prod-billing"): ["confirms"],
        ("kms-throttled", "prod-billing"): [],
        ("queue-deleted", "prod-gone"): ["confirms"],
        ("queue-policy", "prod-critical"): ["confirms"],
        ("too-many-attributes", "prod-raw"): [],
        ("unknown", "prod-weird"): [],
    }
    lost = [n for n in doc["notes"] if "has no DLQ" in n]
    assert [n.split()[3] for n in lost] == ["prod-billing", "prod-kms", "prod-pii", "prod-raw", "prod-weird"]
    assert (
        "could not determine whether the subscription to prod-gone has a DLQ (the topic has no confirmed "
        "subscription to it now); without one its failed messages are gone"
    ) in doc["notes"]
    assert "2 failure events to non-SQS endpoints (Lambda, HTTP/S, ...) not shown" in doc["notes"]
    assert "hooks.example.com" not in json.dumps(doc) and "function:resize" not in json.dumps(doc)


def test_table_groups_by_cause_with_fix_and_what_was_checked(world: World) -> None:
    topic, expected = build_every_cause(world)

    code, text = run(world, "--topic", topic, "--since", "1h", "--no-metrics")

    assert code == Exit.FOUND
    assert "== Queue policy denies the topic: 2 messages to prod-critical ==" in text
    assert f'"Resource":"arn:aws:sqs:{REGION}:{ACCOUNT}:prod-critical"' in text
    assert f'"aws:SourceArn":"{topic}"' in text
    assert "checked: queue policy: confirms: the queue has no access policy" in text
    assert "AWS-managed KMS key alias/aws/sqs" in text
    assert "WeirdNewError" in text and "Something nobody has seen before." in text
    assert all(ident in text for ident in expected)
    assert text.rstrip().endswith("9 failed messages")
    assert "(2 outside the window or filters, 2 to non-SQS endpoints)" in text
    assert "hook-s3cret" not in text and "hooks.example.com" not in text
    assert text.index("== Queue policy") < text.index("== Unknown cause")


def test_queue_filter_keeps_only_deliveries_to_that_queue(world: World) -> None:
    topic, _ = build_every_cause(world)

    code, doc = run_json(
        world, "--topic", topic, "--since", "1h", "--queue", f"arn:aws:sqs:{REGION}:{ACCOUNT}:prod-billing"
    )

    assert code == Exit.FOUND
    assert sorted(f["cause"] for f in doc["failures"]) == ["kms-disabled", "kms-throttled"]
    assert doc["read"]["other_queue"] == 9  # the other topic's and protocols' events are set aside first


def test_window_by_start_and_end_and_slack(world: World) -> None:
    topic, _ = build_every_cause(world)
    start, end = (ago(52)).strftime("%Y-%m-%dT%H:%M:%SZ"), ago(44).strftime("%Y-%m-%dT%H:%M:%SZ")

    code, doc = run_json(world, "--topic", topic, "--start", start, "--end", end)

    assert code == Exit.FOUND
    assert sorted(f["queue"] for f in doc["failures"]) == ["prod-critical", "prod-critical"]


def test_nothing_failed_exits_zero(world: World) -> None:
    topic, _ = build_every_cause(world)

    code, text = run(world, "--topic", topic, "--start", ago(59).isoformat(), "--end", ago(58).isoformat())

    assert code == 0
    assert "No failed deliveries in this window." in text


def test_reads_every_page_of_a_long_window(world: World) -> None:
    topic = world.topic(TOPIC)
    world.enable_logging(topic)
    ids = [f"m-{i:03d}" for i in range(60)]
    for part in range(3):
        world.put_events(
            failure_group(topic),
            [
                (
                    ago(50 - i * 0.5),
                    failure_event(
                        "access_denied", message_id=i_d, topic_arn=topic, queue="q", published=ago(50 - i * 0.5)
                    ),
                )
                for i, i_d in enumerate(ids)
                if i % 3 == part
            ],
        )
    pages: list[str] = []
    source = partial(filter_events, page_size=7, progress=pages.append)
    collector = read_failures(world.clients(), TraceTarget(topic), Window(ago(60), NOW), frozenset(), source=source)

    assert sorted(f.message_id for f in collector.failures()) == ids
    assert len(pages) >= 60 // 7


def test_empty_pages_with_a_token_do_not_end_the_read(world: World) -> None:
    clients = world.clients()
    message = json.dumps(sample("access_denied"))
    group = "sns/us-east-1/123456789012/t/Failure"
    with Stubber(clients.logs) as stub:
        for token, events, following in [
            (None, [message], "a"),
            ("a", [], "b"),
            ("b", [], "c"),
            ("c", [message, message], None),
        ]:
            expected: dict[str, Any] = {"logGroupName": group, "startTime": 0, "endTime": 1000}
            if token:
                expected["nextToken"] = token
            page: dict[str, Any] = {"events": [{"message": m, "timestamp": 1} for m in events]}
            if following:
                page["nextToken"] = following
            stub.add_response("filter_log_events", page, expected)
        start, end = datetime.fromtimestamp(0, UTC), datetime.fromtimestamp(1, UTC)
        read = list(filter_events(clients, group, start, end))
        stub.assert_no_pending_responses()
    assert len(read) == 3


def test_logging_disabled_is_an_error_with_how_to_enable(world: World) -> None:
    topic = world.topic(TOPIC)

    with pytest.raises(ObsError) as caught:
        run(world, "--topic", topic)

    text = str(caught.value)
    assert "delivery-status logging for SQS is not enabled" in text
    assert f"aws sns set-topic-attributes --region {REGION} --topic-arn {topic}" in text
    assert "--attribute-name SQSFailureFeedbackRoleArn" in text


def test_logging_on_without_a_failure_group_means_nothing_failed_yet(world: World) -> None:
    topic = world.topic(TOPIC)
    world.enable_logging(topic)

    code, doc = run_json(world, "--topic", topic)

    assert code == 0
    assert doc["failures"] == []
    assert any("SNS has not logged any failed SQS delivery" in n for n in doc["notes"])


def test_role_unset_but_old_log_with_failures_is_read_with_a_warning(world: World) -> None:
    topic = world.topic(TOPIC)
    message = failure_event("access_denied", message_id="m-1", topic_arn=topic, queue="q", published=ago(30))
    world.put_events(failure_group(topic), [(ago(29), message)])

    code, doc = run_json(world, "--topic", topic)

    assert code == Exit.FOUND
    assert [f["message_id"] for f in doc["failures"]] == ["m-1"]
    assert any("SQSFailureFeedbackRoleArn is not set" in n for n in doc["notes"])


def test_role_unset_and_no_failures_in_an_old_log_is_an_error_that_says_the_group_exists(world: World) -> None:
    topic = world.topic(TOPIC)
    message = failure_event("access_denied", message_id="m-1", topic_arn=topic, queue="q", published=ago(300))
    world.put_events(failure_group(topic), [(ago(299), message)])

    with pytest.raises(ObsError) as caught:
        run(world, "--topic", topic)

    text = str(caught.value)
    assert text.startswith(
        f"cannot trace {topic}: SQSFailureFeedbackRoleArn is not set, so SNS does not log failed SQS deliveries "
        f"now; log group {failure_group(topic)} exists from earlier logging but holds no failure for this window"
    )
    assert "no log group" not in text and "--attribute-name SQSFailureFeedbackRoleArn" in text


def test_missing_topic_is_a_clear_error(world: World) -> None:
    with pytest.raises(ObsError, match=r"topic arn:aws:sns:us-east-1:123456789012:nope does not exist: check --topic"):
        run(world, "--topic", f"arn:aws:sns:{REGION}:{ACCOUNT}:nope")


def test_unreachable_endpoint_is_a_clear_error_without_secrets(world: World, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "s3cr3t-value-never-shown")
    args = parse("--topic", f"arn:aws:sns:{REGION}:{ACCOUNT}:{TOPIC}", "--endpoint-url", "http://127.0.0.1:9")

    with pytest.raises(ObsError) as caught:
        execute(args, world.clients, now=NOW, out=io.StringIO(), err=io.StringIO())

    assert "AWS endpoint unreachable" in str(caught.value)
    assert "s3cr3t" not in str(caught.value)


def test_missing_credentials_are_a_clear_error(world: World, monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"):
        monkeypatch.delenv(name)
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    monkeypatch.delenv("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI", raising=False)

    with pytest.raises(ObsError, match="no usable AWS credentials: set AWS_PROFILE"):
        run(world, "--topic", f"arn:aws:sns:{REGION}:{ACCOUNT}:{TOPIC}")


def test_obs_main_reads_aws_endpoint_url_and_maps_outcomes_to_exit_codes(
    world: World, capsys: pytest.CaptureFixture[str]
) -> None:
    topic = world.topic(TOPIC)
    assert main(["trace", "--topic", topic]) == 1
    assert capsys.readouterr().err.startswith(f"error: cannot trace {topic}: SNS delivery-status logging")

    message = failure_event("kms_access_denied", message_id="m-kms", topic_arn=topic, queue="q", published=ago(3))
    world.put_events(failure_group(topic), [(ago(2), message)])
    # A day, not minutes: the planted times are fixed when the module loads, and a long run must still see them.
    assert main(["trace", "--topic", topic, "--since", "1d"]) == Exit.FOUND
    out = capsys.readouterr().out
    assert "== KMS key unusable by SNS: 1 message to q ==" in out
    assert "m-kms" in out


def test_progress_lines_are_throttled() -> None:
    err = io.StringIO()
    ticks = iter([0.0, 0.2, 1.5, 1.6, 3.0])
    report = progress_lines(err, clock=lambda: next(ticks))
    for page in range(1, 5):
        report(f"group: page {page}")
    assert err.getvalue() == "reading group: page 2\nreading group: page 4\n"


def test_access_denied_names_the_permission_to_grant(world: World) -> None:
    topic = world.topic(TOPIC)
    world.enable_logging(topic)
    world.put_events(failure_group(topic), [])
    clients = world.clients()

    def deny(**_: Any) -> None:
        raise clients.logs.exceptions.ClientError(
            {"Error": {"Code": "AccessDeniedException", "Message": "not authorized"}}, "FilterLogEvents"
        )

    clients.logs.meta.events.register("before-call.logs.FilterLogEvents", deny)
    args = parse("--topic", topic)

    with pytest.raises(ObsError) as caught:
        execute(args, lambda region, endpoint: clients, now=NOW, out=io.StringIO(), err=io.StringIO())

    assert str(caught.value) == (
        f"cannot read log group {failure_group(topic)}: access denied (not authorized): "
        "grant logs:FilterLogEvents to the caller"
    )
