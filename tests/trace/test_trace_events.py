"""Parsing and classifying the real and constructed delivery-status events."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from sync.aws.core import causes
from sync.aws.core.causes import classify
from sync.aws.core.events import parse_event, parse_response, parse_time, queue_name_of
from sync.aws.core.target import iso

EVENTS = Path(__file__).parent / "fixtures" / "events"


def sample(name: str) -> str:
    return (EVENTS / f"{name}.json").read_text().strip()


@pytest.mark.parametrize(
    ("name", "message_id", "queue", "code", "status", "attempts", "cause"),
    [
        (
            "access_denied",
            "71db8efc-3022-50d3-8b55-d784f706e076",
            "sample-sns-subscriber-2",
            "AccessDenied",
            403,
            1,
            causes.QUEUE_POLICY,
        ),
        (
            "kms_access_denied",
            "054099fb-9d8e-5f40-b657-c1eb69e60b29",
            "alarm-queue",
            "KMS.AccessDeniedException",
            400,
            1,
            causes.KMS_ACCESS,
        ),
        (
            "queue_deleted",
            "3f6c2a1e-8b4d-5c7e-9f10-2a3b4c5d6e7f",
            "orders-billing.fifo",
            "AWS.SimpleQueueService.NonExistentQueue",
            400,
            1,
            causes.QUEUE_DELETED,
        ),
        ("data_protection", "34d9b400-c6dd-5444-820d-fbeb0f1f54cf", "NoNameAccess", "", 403, 1, causes.DATA_PROTECTION),
        (
            "too_many_attributes",
            "5d7c4b1a-2e3f-5a6b-8c9d-0e1f2a3b4c5d",
            "events-raw",
            "InvalidParameterValue",
            400,
            1,
            causes.TOO_MANY_ATTRIBUTES,
        ),
        (
            "kms_disabled",
            "7a1b2c3d-4e5f-5061-8273-8495a6b7c8d9",
            "billing",
            "KMS.DisabledException",
            400,
            1,
            causes.KMS_DISABLED,
        ),
        (
            "kms_throttled",
            "9c3d4e5f-6071-5283-9495-a6b7c8d9e0f1",
            "billing",
            "KMS.ThrottlingException",
            400,
            15,
            causes.KMS_THROTTLED,
        ),
        ("unknown", "be5f6071-8293-54a5-b6c7-d8e9f0a1b2c3", "billing", "WeirdNewError", 400, 1, causes.UNKNOWN),
        ("odd_lenient", "d0718293-a4b5-56c7-d8e9-f0a1b2c3d4e5", "billing", "AccessDenied", 403, 2, causes.QUEUE_POLICY),
    ],
)
def test_failure_samples_parse_and_classify(
    name: str, message_id: str, queue: str, code: str, status: int, attempts: int, cause: str
) -> None:
    delivery = parse_event(sample(name), logged_ms=1_796_036_400_000)
    assert delivery is not None
    assert delivery.failed
    assert delivery.message_id == message_id
    assert delivery.queue_name == queue
    assert delivery.response.error_code == code
    assert delivery.status_code == status
    assert delivery.attempts == attempts
    assert classify(delivery).key == cause


def test_success_sample_is_not_a_failure_and_keeps_the_sqs_message_id() -> None:
    delivery = parse_event(sample("success"))
    assert delivery is not None
    assert not delivery.failed
    assert delivery.response.sqs_message_id == "7bebbb93-8399-4747-a9ca-843ce5813315"
    assert delivery.logged is None


def test_access_denied_sample_is_unrecoverable_with_its_message() -> None:
    delivery = parse_event(sample("access_denied"))
    assert delivery is not None
    assert delivery.response.unrecoverable
    assert delivery.response.error_message.startswith("Access to the resource https://sqs.us-east-1")
    assert delivery.topic_arn == "arn:aws:sns:us-east-1:444000444:sample-sns-logs-generator"
    assert iso(delivery.published) == "2021-07-26T14:21:24.892Z"


def test_trimmed_fraction_timestamp_means_hundredths() -> None:
    delivery = parse_event(sample("kms_access_denied"))
    assert delivery is not None
    assert iso(delivery.published) == "2020-10-26T15:58:32.470Z"


def test_data_protection_sample_has_plain_text_response_and_odd_iso_time() -> None:
    delivery = parse_event(sample("data_protection"))
    assert delivery is not None
    assert delivery.response.error_code == ""
    assert delivery.response.raw.startswith("The topic's data protection policy prohibits")
    assert iso(delivery.published) == "2022-05-12T02:12:44.000Z"
    assert delivery.delivery_id == "98236591c-56aa-51ee-a5ed-0c7d43493170"


def test_lenient_sample_without_status_or_topic_is_judged_by_the_response() -> None:
    delivery = parse_event(sample("odd_lenient"), logged_ms=1_796_036_415_000)
    assert delivery is not None
    assert delivery.status == ""
    assert delivery.topic_arn == ""
    assert iso(delivery.published) == "2026-11-30T11:00:00.123Z"
    assert iso(delivery.logged) == "2026-11-30T11:00:15.000Z"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2021-07-26 14:21:24.892", "2021-07-26T14:21:24.892Z"),
        ("2020-10-26 15:58:32.47", "2020-10-26T15:58:32.470Z"),
        ("2022-05-12T2:12:44Z", "2022-05-12T02:12:44.000Z"),
        ("2026-11-30T12:00:00+02:00", "2026-11-30T10:00:00.000Z"),
        ("2026-11-30T12:00:00.123456789-0130", "2026-11-30T13:30:00.123Z"),
        ("2026-11-30 10:15", "2026-11-30T10:15:00.000Z"),
        ("2026-11-30", "2026-11-30T00:00:00.000Z"),
        ("1796036400", "2026-11-30T11:00:00.000Z"),
        ("1796036400123", "2026-11-30T11:00:00.123Z"),
    ],
)
def test_timestamps_in_every_seen_shape(text: str, expected: str) -> None:
    assert iso(parse_time(text)) == expected


@pytest.mark.parametrize("text", ["", "yesterday", "2026-13-45 99:99:99", "2026-11-30T10:15:00 PST"])
def test_unparseable_timestamps_are_none(text: str) -> None:
    assert parse_time(text) is None


def test_numeric_epoch_in_seconds_and_milliseconds() -> None:
    assert parse_time(1_796_036_400) == datetime(2026, 11, 30, 11, 0, tzinfo=UTC)
    assert parse_time(1_796_036_400_000) == datetime(2026, 11, 30, 11, 0, tzinfo=UTC)
    assert parse_time(True) is None


@pytest.mark.parametrize(
    "message",
    ["", "not json at all", "[1, 2, 3]", '"a string"', '{"level": "info", "msg": "unrelated"}', "{broken"],
)
def test_noise_is_not_a_delivery(message: str) -> None:
    assert parse_event(message) is None


def test_missing_fields_leave_blanks_not_errors() -> None:
    delivery = parse_event('{"delivery": {"statusCode": "five hundred"}}')
    assert delivery is not None
    assert delivery.message_id == ""
    assert delivery.status_code is None
    assert delivery.published is None
    assert not delivery.failed


def test_nested_sections_encoded_as_strings_are_decoded() -> None:
    message = '{"notification": "{\\"messageId\\": \\"m-1\\"}", "delivery": {}, "status": "failure"}'
    delivery = parse_event(message)
    assert delivery is not None
    assert delivery.message_id == "m-1"
    assert delivery.failed


def test_provider_response_key_case_does_not_matter() -> None:
    response = parse_response('{"errorCode": "AccessDenied", "ERRORMESSAGE": "no"}')
    assert (response.error_code, response.error_message) == ("AccessDenied", "no")


def test_provider_response_that_is_json_but_not_an_object_is_kept_raw() -> None:
    assert parse_response("[1]").raw == "[1]"
    assert parse_response(None).raw == ""


@pytest.mark.parametrize(
    ("code", "message", "expected"),
    [
        ("KMS.KMSInvalidStateException", "", causes.KMS_DISABLED),
        ("KmsDisabled", "", causes.KMS_DISABLED),
        ("KMS.NotFoundException", "", causes.KMS_NOT_FOUND),
        ("KmsThrottled", "", causes.KMS_THROTTLED),
        ("KmsAccessDenied", "", causes.KMS_ACCESS),
        ("KMS.OptInRequired", "", causes.UNKNOWN),
        ("QueueDoesNotExist", "", causes.QUEUE_DELETED),
        ("AccessDeniedException", "", causes.QUEUE_POLICY),
        ("RequestThrottled", "", causes.SQS_THROTTLED),
        ("InvalidParameterValue", "Value for parameter is invalid", causes.UNKNOWN),
        ("", "", causes.UNKNOWN),
    ],
)
def test_classification_by_error_code(code: str, message: str, expected: str) -> None:
    assert causes.cause_key(code, message) == expected


def test_every_cause_has_a_fix_and_an_explanation() -> None:
    for cause in causes.CAUSES.values():
        assert cause.title and cause.explain.endswith(".") and cause.fix.endswith(".")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("arn:aws:sqs:us-east-1:123456789012:prod-critical", "prod-critical"),
        ("https://sqs.us-east-1.amazonaws.com/123456789012/prod-critical", "prod-critical"),
        ("prod-critical.fifo", "prod-critical.fifo"),
    ],
)
def test_queue_names_from_arns_urls_and_names(text: str, expected: str) -> None:
    assert queue_name_of(text) == expected
