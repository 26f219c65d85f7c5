"""obs audit: read an environment's live SNS -> SQS wiring and judge it against the definitions."""

from __future__ import annotations

from collections.abc import Sequence

from sync.aws.core.audit import AuditResult, in_report_order, judge
from sync.aws.core.declared import QueueSpec
from sync.aws.reads.clients import Clients, caller_account
from sync.aws.reads.survey import survey
from sync.errors import ObsError


def audit(clients: Clients, env: str, account: str, region: str, specs: Sequence[QueueSpec]) -> AuditResult:
    caller = caller_account(clients)
    if caller != account:
        raise ObsError.of(
            f"cannot audit {env}: the credentials are for account {caller}, the environment lives in {account}",
            f"use credentials of account {account} (its AWS_PROFILE, or assume a read-only role there: "
            f"aws sts assume-role --role-arn arn:aws:iam::{account}:role/<read-only role> ...)",
        )
    live = survey(clients, specs, account)
    found = judge(specs, live)
    return AuditResult(env, account, region, tuple(s.queue for s in specs), in_report_order(found))
