"""obs trace never gives a false all-clear: other accounts, blind logs, unreadable ARNs, causes and retries."""

from __future__ import annotations

import io
import json
from dataclasses import replace
from typing import Any

import boto3
import pytest

from sync.aws.core import causes
from sync.aws.core.checks import CONFIRMS, CONTRADICTS, judge
from sync.aws.core.events import parse_event
from sync.aws.core.facts import KeyFacts, QueueFacts
from sync.aws.core.failures import as_failure
from sync.aws.core.redrive import Redrive, loss_notes
from sync.cli.conventions import Exit
from sync.cli.trace import execute
from sync.errors import ObsError
from tests.trace.test_trace_moto import TOPIC, ago, parse, run_json
from tests.trace.trace_world import ACCOUNT, REGION, World, failure_event, failure_group

QUEUE_ARN = f"arn:aws:sqs:{REGION}:{ACCOUNT}:prod-critical"
TOPIC_ARN = f"arn:aws:sns:{REGION}:{ACCOUNT}:{TOPIC}"


def response(code: str, message: str, request_id: str = "Unrecoverable") -> str:
    return json.dumps({"ErrorCode": code, "ErrorMessage": message, "sqsRequestId": request_id})


def failure(code: str, message: str, *, attempts: int = 1, request_id: str = "Unrecoverable") -> Any:
    text = failure_event(
        "unknown",
        message_id="m-1",
        topic_arn=TOPIC_ARN,
        queue="prod-critical",
        published=ago(5),
        providerResponse=response(code, message, request_id),
        attempts=attempts,
    )
    delivery = parse_event(text)
    assert delivery is not None
    return as_failure(delivery, "m-1")


# --- causes the classifier used to call unknown --------------------------------------------------------


@pytest.mark.parametrize(
    ("code", "message", "cause"),
    [
        ("AWS.SimpleQueueService.InternalError", "We encountered an internal error.", causes.SQS_THROTTLED),
        ("KMS.InvalidKeyUsageException", "The key usage is not valid.", causes.KMS_KEY_USAGE),
        ("KmsInvalidKeyUsage", "KMS key usage is invalid for this operation.", causes.KMS_KEY_USAGE),
        (
            "KMS.AccessDeniedException",
            "The ciphertext refers to a customer master key that does not exist, does not exist in this region, "
            "or you are not allowed to access.",
            causes.KMS_GONE_OR_DENIED,
        ),
        ("KMS.AccessDeniedException", "null (Service: AWSKMS; Status Code: 400)", causes.KMS_ACCESS),
    ],
)
def test_server_errors_key_usage_and_ambiguous_kms_denials_are_classified(code: str, message: str, cause: str) -> None:
    assert failure(code, message).cause.key == cause


def test_an_ambiguous_kms_denial_says_both_and_the_live_key_decides() -> None:
    found = failure("KMS.AccessDeniedException", "key does not exist or you are not allowed to access it")
    assert "does not exist" in found.cause.explain and "not allowed" in found.cause.explain
    live = QueueFacts(queue="prod-critical", exists=True)
    gone = judge(found.cause.key, replace(live, key=KeyFacts("k", state="NotFound")), QUEUE_ARN, TOPIC_ARN)
    allowed = {"Effect": "Allow", "Principal": {"Service": "sns.amazonaws.com"}, "Resource": "*"}
    policy = json.dumps({"Statement": [{**allowed, "Action": ["kms:GenerateDataKey*", "kms:Decrypt"]}]})
    usable = KeyFacts("k", manager="CUSTOMER", state="Enabled", policy=policy)
    fine = judge(found.cause.key, replace(live, key=usable), QUEUE_ARN, TOPIC_ARN)
    assert gone is not None and fine is not None
    assert (gone.outcome, gone.detail) == (CONFIRMS, "KMS key k does not exist")
    assert fine.outcome == CONTRADICTS


def test_a_key_of_the_wrong_kind_is_confirmed_live() -> None:
    found = failure("KmsInvalidKeyUsage", "invalid")
    key = KeyFacts("k", manager="CUSTOMER", state="Enabled", usage="SIGN_VERIFY", spec="RSA_2048")
    check = judge(found.cause.key, QueueFacts(queue="prod-critical", exists=True, key=key), QUEUE_ARN, TOPIC_ARN)
    assert check is not None
    assert (check.outcome, check.detail) == (
        CONFIRMS,
        "KMS key k is RSA_2048 for SIGN_VERIFY, not a symmetric encryption key",
    )


# --- retries are read from each event ------------------------------------------------------------------


def test_whether_sns_retried_is_read_from_the_event_not_the_cause() -> None:
    retried_denial = failure("KMS.AccessDeniedException", "denied", attempts=3, request_id="")
    first_try_throttle = failure("KMS.ThrottlingException", "Rate exceeded", attempts=1)
    assert retried_denial.cause.retried is False and retried_denial.retried is True
    assert first_try_throttle.cause.retried is True and first_try_throttle.retried is False
    no_dlq = {QUEUE_ARN: Redrive(QUEUE_ARN, "", known=True)}
    assert loss_notes([retried_denial], no_dlq) == []
    assert "has no DLQ" in loss_notes([first_try_throttle], no_dlq)[0]


# --- no false all-clear --------------------------------------------------------------------------------


def as_account(world: World, monkeypatch: pytest.MonkeyPatch, account: str) -> None:
    sts = boto3.client("sts", endpoint_url=world.endpoint, region_name=REGION)
    creds = sts.assume_role(RoleArn=f"arn:aws:iam::{account}:role/reader", RoleSessionName="obs-tests")["Credentials"]
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", creds["AccessKeyId"])
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", creds["SecretAccessKey"])
    monkeypatch.setenv("AWS_SESSION_TOKEN", creds["SessionToken"])


def test_a_topic_of_another_account_is_an_error_that_says_where_to_run(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    topic = world.topic(TOPIC)
    world.enable_logging(topic)
    world.put_events(
        failure_group(topic),
        [
            (
                ago(10),
                failure_event(
                    "access_denied", message_id="m-1", topic_arn=topic, queue="prod-critical", published=ago(11)
                ),
            )
        ],
    )
    as_account(world, monkeypatch, "222222222222")  # the queue owner's account: the log is not here

    with pytest.raises(ObsError) as caught:
        run_json(world, "--topic", topic)

    text = str(caught.value)
    assert f"SNS writes its delivery-status logs in the topic owner's account {ACCOUNT}" in text
    assert "credentials of account 222222222222" in text
    assert f"arn:aws:iam::{ACCOUNT}:role/" in text


def test_a_broken_logging_role_without_metrics_is_not_an_all_clear(world: World) -> None:
    topic = world.topic(TOPIC)
    world.enable_logging(topic)
    trust = {"Effect": "Allow", "Principal": {"Service": "lambda.amazonaws.com"}, "Action": "sts:AssumeRole"}
    world.iam.update_assume_role_policy(
        RoleName="sns-delivery-status", PolicyDocument=json.dumps({"Version": "2012-10-17", "Statement": [trust]})
    )

    with pytest.raises(ObsError) as caught:
        run_json(world, "--topic", topic, "--no-metrics")

    assert "cannot trust 'no failures'" in str(caught.value)
    assert "trust policy does not allow sns.amazonaws.com sts:AssumeRole" in str(caught.value)
    assert "aws iam update-assume-role-policy --role-name sns-delivery-status" in str(caught.value)


def test_a_working_logging_role_without_metrics_still_gives_the_all_clear(world: World) -> None:
    topic = world.topic(TOPIC)
    world.enable_logging(topic)

    code, doc = run_json(world, "--topic", topic, "--no-metrics")

    assert (code, doc["failed"]) == (0, 0)


def test_an_unreadable_logging_role_without_metrics_says_it_cannot_tell(world: World) -> None:
    topic = world.topic(TOPIC)
    world.enable_logging(topic)
    clients = world.clients()

    def deny(**_: Any) -> None:
        raise clients.iam.exceptions.ClientError({"Error": {"Code": "AccessDenied", "Message": "no"}}, "GetRole")

    clients.iam.meta.events.register("before-call.iam.GetRole", deny)

    with pytest.raises(ObsError, match=r"cannot tell whether .* had no failures"):
        execute(
            parse("--topic", topic, "--no-metrics", "--format", "json"),
            lambda *_: clients,
            out=io.StringIO(),
            err=io.StringIO(),
        )


def test_failures_to_an_sqs_arn_with_a_bad_account_id_are_counted_and_reported(world: World) -> None:
    topic = world.topic(TOPIC)
    world.enable_logging(topic)
    doc = json.loads(failure_event("access_denied", message_id="m-9", topic_arn=topic, queue="q", published=ago(11)))
    doc["delivery"]["destination"] = f"arn:aws:sqs:{REGION}:12345:prod-critical"
    world.put_events(failure_group(topic), [(ago(10), json.dumps(doc, separators=(",", ":")))])

    code, result = run_json(world, "--topic", topic, "--no-metrics")

    assert code == Exit.FOUND
    assert (result["failed"], result["read"]["malformed_sqs"], result["read"]["other_protocol"]) == (0, 1, 0)
    assert any("1 failure events name an SQS destination whose ARN obs cannot read" in n for n in result["notes"])


def test_losses_outside_the_failure_log_are_summed_from_their_metrics(world: World) -> None:
    topic = world.topic(TOPIC)
    world.enable_logging(topic)
    for name, value in [
        ("NumberOfNotificationsFailedToRedriveToDlq", 2.0),
        ("NumberOfNotificationsFilteredOut-InvalidAttributes", 5.0),
    ]:
        world.cloudwatch.put_metric_data(
            Namespace="AWS/SNS",
            MetricData=[
                {
                    "MetricName": name,
                    "Dimensions": [{"Name": "TopicName", "Value": TOPIC}],
                    "Timestamp": ago(20),
                    "Value": value,
                    "Unit": "Count",
                }
            ],
        )

    code, doc = run_json(world, "--topic", topic)

    assert code == 0
    assert [p["sum"] for p in doc["metrics"]["failed_to_redrive_to_dlq"]] == [2.0]
    assert [p["sum"] for p in doc["metrics"]["filtered_out_invalid_attributes"]] == [5.0]
    notes = " ".join(doc["notes"])
    assert "NumberOfNotificationsFailedToRedriveToDlq counted 2" in notes
    assert "NumberOfNotificationsFilteredOut-InvalidAttributes counted 5" in notes
