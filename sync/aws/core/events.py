"""Parse SNS delivery-status log events leniently into typed deliveries (pure)."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from sync.expand import placement

# "2021-07-26 14:21:24.892", "2020-10-26 15:58:32.47", "2022-05-12T2:12:44Z", "...+00:00"
_STAMP = re.compile(
    r"^\s*(\d{4})-(\d{1,2})-(\d{1,2})(?:[ T](\d{1,2}):(\d{1,2})(?::(\d{1,2})(?:[.,](\d+))?)?)?"
    r"\s*(Z|UTC|[+-]\d{2}:?\d{2})?\s*$",
    re.IGNORECASE,
)
_SQS_ARN = re.compile(rf"^arn:{placement.ARN_PARTITION}:sqs:[a-z0-9-]+:\d{{12}}:[^:/\s]+$")
_SQS_SERVICE = re.compile(rf"^arn:{placement.ARN_PARTITION}:sqs:")
_EPOCH_MS_FLOOR = 10**11  # larger numbers are epoch milliseconds, smaller ones epoch seconds


@dataclass(frozen=True)
class ProviderResponse:
    """The decoded `delivery.providerResponse`: JSON inside a string, sometimes plain text."""

    error_code: str = ""
    error_message: str = ""
    sqs_request_id: str = ""
    sqs_message_id: str = ""
    raw: str = ""

    @property
    def unrecoverable(self) -> bool:
        return self.sqs_request_id == "Unrecoverable"


@dataclass(frozen=True)
class Delivery:
    """One delivery-status event for an SQS endpoint."""

    status: str  # SUCCESS, FAILURE or "" when absent
    message_id: str
    topic_arn: str
    published: datetime | None
    logged: datetime | None
    destination: str  # the queue ARN for SQS; a Lambda/Firehose ARN or an HTTP(S) URL for other protocols
    delivery_id: str
    status_code: int | None
    attempts: int | None
    dwell_ms: int | None
    response: ProviderResponse

    @property
    def failed(self) -> bool:
        if self.status:
            return self.status.upper() == "FAILURE"
        # no status field: judge by what the provider said
        return bool(self.response.error_code) or (self.status_code is not None and self.status_code >= 400)

    @property
    def queue_name(self) -> str:
        return queue_name_of(self.destination)

    @property
    def to_sqs(self) -> bool:
        """SNS writes every protocol's failures to the same group: only SQS destinations are ours."""
        return bool(_SQS_ARN.match(self.destination))

    @property
    def malformed_sqs(self) -> bool:
        """An SQS ARN obs cannot place (e.g. an account id that is not 12 digits): counted, never taken for non-SQS."""
        return not self.to_sqs and bool(_SQS_SERVICE.match(self.destination.strip()))


def queue_name_of(destination: str) -> str:
    """The queue name from a queue ARN or URL; the input itself otherwise."""
    text = destination.strip().rstrip("/")
    if text.startswith("arn:"):
        return text.split(":", 5)[-1]
    return text.rsplit("/", 1)[-1]


def parse_time(value: object) -> datetime | None:
    """A UTC datetime from any of the timestamp shapes seen in the logs, or None."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int | float):
        return _from_epoch(float(value))
    if not isinstance(value, str):
        return None
    text = value.strip()
    if re.fullmatch(r"\d+(\.\d+)?", text):
        return _from_epoch(float(text))
    match = _STAMP.match(text)
    if match is None:
        return None
    year, month, day, hour, minute, second, fraction, zone = match.groups()
    try:
        stamp = datetime(
            int(year), int(month), int(day), int(hour or 0), int(minute or 0), int(second or 0), tzinfo=UTC
        )
    except ValueError:
        return None
    if fraction:
        stamp += timedelta(microseconds=int(fraction[:6].ljust(6, "0")))
    return stamp - _offset(zone)


def _offset(zone: str | None) -> timedelta:
    if not zone or zone.upper() in {"Z", "UTC"}:
        return timedelta()
    sign = -1 if zone[0] == "-" else 1
    digits = zone[1:].replace(":", "")
    return sign * timedelta(hours=int(digits[:2]), minutes=int(digits[2:]))


def _from_epoch(number: float) -> datetime | None:
    seconds = number / 1000 if number >= _EPOCH_MS_FLOOR else number
    try:
        return datetime.fromtimestamp(seconds, tz=UTC)
    except (OverflowError, OSError, ValueError):
        return None


def parse_response(value: object) -> ProviderResponse:
    """Decode the provider response: a JSON string, an already decoded object, or plain text."""
    if value is None:
        return ProviderResponse()
    raw = value if isinstance(value, str) else json.dumps(value, sort_keys=True)
    doc: object = value
    if isinstance(value, str):
        try:
            doc = json.loads(value)
        except ValueError:
            return ProviderResponse(raw=value.strip())
    if not isinstance(doc, dict):
        return ProviderResponse(raw=raw.strip())
    fields = {str(k).lower(): v for k, v in doc.items()}
    return ProviderResponse(
        error_code=_text(fields.get("errorcode")),
        error_message=_text(fields.get("errormessage")),
        sqs_request_id=_text(fields.get("sqsrequestid")),
        sqs_message_id=_text(fields.get("sqsmessageid")),
        raw=raw,
    )


def parse_event(message: str, logged_ms: int | None = None) -> Delivery | None:
    """One log event `message` as a Delivery; None when it is not a delivery-status event at all."""
    try:
        doc = json.loads(message)
    except ValueError:
        return None
    if not isinstance(doc, dict):
        return None
    notification = _section(doc, "notification")
    delivery = _section(doc, "delivery")
    if not notification and not delivery:
        return None
    return Delivery(
        status=_text(doc.get("status")).upper(),
        message_id=_text(notification.get("messageId")),
        topic_arn=_text(notification.get("topicArn")),
        published=parse_time(notification.get("timestamp")),
        logged=parse_time(logged_ms) if logged_ms is not None else None,
        destination=_text(delivery.get("destination")),
        delivery_id=_text(delivery.get("deliveryId")),
        status_code=_integer(delivery.get("statusCode")),
        attempts=_integer(delivery.get("attempts")),
        dwell_ms=_integer(delivery.get("dwellTimeMs")),
        response=parse_response(delivery.get("providerResponse")),
    )


def _section(doc: dict[str, Any], name: str) -> dict[str, Any]:
    value = doc.get(name)
    if isinstance(value, str):  # some forwarders re-encode nested objects as strings
        try:
            value = json.loads(value)
        except ValueError:
            return {}
    return value if isinstance(value, dict) else {}


def _text(value: object) -> str:
    if value is None:
        return ""
    return value.strip() if isinstance(value, str) else str(value)


def _integer(value: object) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return int(value)
    if isinstance(value, str):
        try:
            return int(float(value.strip()))
        except ValueError:
            return None
    return None


def arn_region(arn: str) -> str:
    parts = arn.split(":")
    return parts[3] if len(parts) >= 6 and parts[0] == "arn" else ""


def arn_account(arn: str) -> str:
    parts = arn.split(":")
    return parts[4] if len(parts) >= 6 and parts[0] == "arn" else ""
