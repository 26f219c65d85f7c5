"""Confirm a logged cause against the live configuration, and say what was checked (pure)."""

from __future__ import annotations

from dataclasses import dataclass, replace

from sync.trace import causes
from sync.trace.facts import QueueFacts
from sync.trace.policy import key_policy_allows, queue_policy_allows

CHECKABLE = frozenset(
    {causes.QUEUE_POLICY, causes.QUEUE_DELETED, causes.KMS_ACCESS, causes.KMS_DISABLED, causes.KMS_NOT_FOUND}
)
CONFIRMS = "confirms"
CONTRADICTS = "contradicts"
INCONCLUSIVE = "inconclusive"


@dataclass(frozen=True)
class Check:
    """One live fact looked at for one (cause, queue) pair."""

    cause: str
    queue: str
    checked: str
    outcome: str  # confirms, contradicts, inconclusive
    detail: str
    queue_arn: str = ""  # queues of one name may live in several regions or accounts


def judge(cause: str, facts: QueueFacts, queue_arn: str, topic_arn: str) -> Check | None:
    """What the live configuration says about a cause; None when there is nothing to look at."""
    check = _judge(cause, facts, queue_arn, topic_arn)
    return replace(check, queue_arn=queue_arn) if check is not None else None


def _judge(cause: str, facts: QueueFacts, queue_arn: str, topic_arn: str) -> Check | None:
    if cause not in CHECKABLE:
        return None
    if facts.exists is None:
        return Check(cause, facts.queue, "queue", INCONCLUSIVE, f"could not read the queue: {facts.unread}")
    if cause == causes.QUEUE_DELETED:
        if facts.exists:
            return _check(cause, facts, "queue existence", CONTRADICTS, "a queue with this name exists now")
        return _check(cause, facts, "queue existence", CONFIRMS, "the queue does not exist")
    if not facts.exists:
        return _check(cause, facts, "queue existence", INCONCLUSIVE, "the queue does not exist any more")
    if cause == causes.QUEUE_POLICY:
        verdict = queue_policy_allows(facts.policy, queue_arn, topic_arn)
        outcome = {False: CONFIRMS, True: CONTRADICTS, None: INCONCLUSIVE}[verdict.allows]
        detail = verdict.reason + (" (changed since the failure?)" if verdict.allows else "")
        return _check(cause, facts, "queue policy", outcome, detail)
    return _judge_key(cause, facts, topic_arn)


def _check(cause: str, facts: QueueFacts, checked: str, outcome: str, detail: str) -> Check:
    return Check(cause, facts.queue, checked, outcome, detail)


def _judge_key(cause: str, facts: QueueFacts, topic_arn: str) -> Check:
    key = facts.key
    if key is None:
        return _check(cause, facts, "queue KMS key", CONTRADICTS, "the queue is not encrypted with a KMS key now")
    name = f"KMS key {key.key}"
    if key.unread:
        return _check(cause, facts, "queue KMS key", INCONCLUSIVE, f"{name}: {key.unread}")
    if key.state == "NotFound":
        outcome = CONFIRMS if cause == causes.KMS_NOT_FOUND else INCONCLUSIVE
        return _check(cause, facts, "queue KMS key", outcome, f"{name} does not exist")
    if key.state in {"Disabled", "PendingDeletion", "PendingReplicaDeletion", "Unavailable"}:
        outcome = CONFIRMS if cause == causes.KMS_DISABLED else INCONCLUSIVE
        return _check(cause, facts, "queue KMS key", outcome, f"{name} is {key.state}")
    if cause != causes.KMS_ACCESS:
        return _check(cause, facts, "queue KMS key", CONTRADICTS, f"{name} is {key.state or 'readable'} now")
    if key.manager == "AWS":
        detail = f"the queue uses the AWS-managed {name}, whose policy cannot allow SNS"
        return _check(cause, facts, "queue KMS key", CONFIRMS, detail)
    verdict = key_policy_allows(key.policy, topic_arn)
    outcome = {False: CONFIRMS, True: CONTRADICTS, None: INCONCLUSIVE}[verdict.allows]
    return _check(cause, facts, "key policy", outcome, f"{name}: {verdict.reason}")
