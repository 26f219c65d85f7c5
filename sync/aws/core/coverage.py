"""What the Failure log can and cannot show for a window, said honestly next to the metric (pure)."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime, timedelta

from sync.aws.core.facts import LoggingStatus
from sync.aws.core.failures import Failure, Tally, Window
from sync.aws.core.metrics import MetricSummary
from sync.aws.core.target import TraceTarget
from sync.errors import ObsError
from sync.expand import placement

LOG_LAG = timedelta(minutes=1)  # SNS writes a failure 15-60 s after giving up


def metric_gap(metrics: MetricSummary, logged: int, other_protocol: int) -> list[str]:
    """Say so when CloudWatch counted more failures than the log holds, and what the two numbers count."""
    counted = int(metrics.total_failed)
    if counted <= logged + other_protocol:
        return []
    others = f" and {other_protocol} failure events to other protocols" if other_protocol else ""
    return [
        f"NumberOfNotificationsFailed counted {counted} for the topic (every protocol; HTTP/S counts each failed "
        f"attempt, SQS each message SNS gave up on) but the Failure log holds {logged} failed SQS deliveries"
        f"{others}: SNS may still be writing the log (trace again later, or widen --slack), a retried delivery "
        "may be logged later, other protocols may not be logged, or logging was turned on after some failed"
    ]


def recent_note(window: Window, now: datetime) -> list[str]:
    """A read reaching into the last minute may miss failures SNS (or CloudWatch) has not logged yet."""
    if min(window.read_end, window.end + LOG_LAG) <= now - LOG_LAG:
        return []
    return ["the window reaches the last minute: failures in the last minute may not be logged yet"]


def retried_note(failures: Iterable[Failure]) -> list[str]:
    """Retried causes are logged when SNS gives up, which can be long after the publish time."""
    retried = sorted({f.cause.title for f in failures if f.retried})
    if not retried:
        return []
    return [
        f"{', '.join(retried)}: SNS retries these and logs a failure only when it gives up, up to 23 days after "
        "publish, so a window on publish time can miss messages that are still being retried"
    ]


def silent_logging(
    target: TraceTarget, status: LoggingStatus, metrics: MetricSummary | None, tally: Tally, other_protocols: bool
) -> ObsError | None:
    """CloudWatch counts failures, SNS logged nothing at all: with only SQS subscriptions, logging is broken."""
    counted = int(metrics.total_failed) if metrics is not None else 0
    if not status.failure_role or counted == 0 or tally.failed_events or other_protocols:
        return None
    group = target.failure_log_group
    where = f"to log group {group}" if status.failure_group_exists else f"(log group {group} was never created)"
    return ObsError.of(
        f"cannot trust 'no failures' for {target.topic_arn}: CloudWatch counted {counted} failed deliveries in "
        f"the window but SNS logged none {where}, although SQSFailureFeedbackRoleArn is {status.failure_role}: "
        "SNS is probably unable to use that role",
        f"make the role's trust policy allow {placement.SNS_PRINCIPAL} sts:AssumeRole and its permissions allow "
        "logs:CreateLogGroup, logs:CreateLogStream and logs:PutLogEvents (if logging was turned on during this "
        "window, trace a window after that)",
    )


def metric_losses(metrics: MetricSummary) -> list[str]:
    """Losses the Failure log cannot show: a redrive to the DLQ that failed, and filter-policy drops."""
    notes = []
    if metrics.total_not_redriven:
        notes.append(
            f"NumberOfNotificationsFailedToRedriveToDlq counted {metrics.total_not_redriven:g}: SNS could not move "
            "those messages to the subscription DLQ either, so they are lost although a DLQ is set; check the "
            "DLQ's queue policy and KMS key (obs audit checks both)"
        )
    if metrics.total_filtered_invalid:
        notes.append(
            f"NumberOfNotificationsFilteredOut-InvalidAttributes counted {metrics.total_filtered_invalid:g}: a "
            "subscription filter policy dropped those messages for invalid or missing message attributes; "
            "they never reach the Failure log, so they are not listed here"
        )
    return notes


def unshown_notes(tally: Tally, group: str) -> list[str]:
    """Failure events read but not listed, and why: never hidden silently."""
    notes = []
    if tally.other_protocol:
        notes.append(f"{tally.other_protocol} failure events to non-SQS endpoints (Lambda, HTTP/S, ...) not shown")
    if tally.malformed_sqs:
        notes.append(
            f"{tally.malformed_sqs} failure events name an SQS destination whose ARN obs cannot read (an account id "
            f"that is not 12 digits, or a malformed part): failed deliveries not listed above; read them in {group}"
        )
    return notes
