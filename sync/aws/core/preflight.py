"""Decide whether the Failure log can answer the question at all (pure)."""

from __future__ import annotations

from dataclasses import dataclass

from sync.aws.core.facts import LoggingStatus
from sync.aws.core.target import TraceTarget
from sync.errors import ObsError
from sync.expand import placement


@dataclass(frozen=True)
class Preflight:
    """Whether to read the Failure group, and what to tell the user about the logging set-up."""

    read: bool
    notes: tuple[str, ...]
    logging_on: bool


def enable_instructions(target: TraceTarget) -> str:
    role = placement.arn("iam", target.region, target.account_id, "role/sns-delivery-status-logging", regional=False)
    return (
        "turn on SNS delivery-status logging for SQS: "
        f"aws sns set-topic-attributes --region {target.region} --topic-arn {target.topic_arn} "
        f"--attribute-name SQSFailureFeedbackRoleArn --attribute-value {role} "
        f"(a role trusted by {placement.SNS_PRINCIPAL} with logs:CreateLogGroup, logs:CreateLogStream and "
        "logs:PutLogEvents; in CloudFormation: DeliveryStatusLogging with Protocol sqs). "
        "Only deliveries after that are logged"
    )


def preflight(status: LoggingStatus, target: TraceTarget) -> Preflight:
    """Refuse to report 'no failures' when nothing would have logged them."""
    group = target.failure_log_group
    if status.failure_role and status.failure_group_exists:
        return Preflight(read=True, notes=(), logging_on=True)
    if status.failure_role:
        note = (
            f"delivery-status logging is on (SQSFailureFeedbackRoleArn {status.failure_role}) and log group "
            f"{group} does not exist yet: SNS has not logged any failed SQS delivery for this topic"
        )
        return Preflight(read=False, notes=(note,), logging_on=True)
    if status.failure_group_exists:
        note = (
            f"SQSFailureFeedbackRoleArn is not set on {target.topic_arn}, but {group} exists: failures "
            "are read from it, yet deliveries since logging was turned off are not logged"
        )
        return Preflight(read=True, notes=(note,), logging_on=False)
    raise logging_off(target, group_exists=False)


def logging_off(target: TraceTarget, *, group_exists: bool) -> ObsError:
    """Logging is off; an old Failure group, if any, holds nothing for this window."""
    group = target.failure_log_group
    if group_exists:
        return ObsError.of(
            f"cannot trace {target.topic_arn}: SQSFailureFeedbackRoleArn is not set, so SNS does not log failed "
            f"SQS deliveries now; log group {group} exists from earlier logging but holds no failure for this "
            "window, and 'no failures' would mean nothing",
            enable_instructions(target),
        )
    return ObsError.of(
        f"cannot trace {target.topic_arn}: SNS delivery-status logging for SQS is not enabled "
        f"(no SQSFailureFeedbackRoleArn, no log group {group}), so failed deliveries "
        "are not recorded anywhere and 'no failures' would mean nothing",
        enable_instructions(target),
    )
