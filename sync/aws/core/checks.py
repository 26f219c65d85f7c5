"""Confirm a logged cause against the live configuration, and say what was checked (pure)."""

from __future__ import annotations

from dataclasses import dataclass, replace

from sync.aws.core import causes
from sync.aws.core.encryption import (
    AWS_MANAGED,
    DISABLED,
    NOT_FOUND,
    POLICY_DENIES,
    UNREAD,
    UNSURE,
    USABLE,
    WRONG_KIND,
    key_verdict,
)
from sync.aws.core.facts import QueueFacts
from sync.aws.core.policy import queue_policy_allows
from sync.expand import placement

CHECKABLE = frozenset(
    {
        causes.QUEUE_POLICY,
        causes.QUEUE_DELETED,
        causes.KMS_ACCESS,
        causes.KMS_DISABLED,
        causes.KMS_NOT_FOUND,
        causes.KMS_KEY_USAGE,
        causes.KMS_GONE_OR_DENIED,
    }
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
    return _judge_key(cause, facts, queue_arn, topic_arn)


def _check(cause: str, facts: QueueFacts, checked: str, outcome: str, detail: str) -> Check:
    return Check(cause, facts.queue, checked, outcome, detail)


def _judge_key(cause: str, facts: QueueFacts, queue_arn: str, topic_arn: str) -> Check:
    """The key judged by the same rules as obs audit, then weighed against the logged cause."""
    key = facts.key
    if key is None:
        return _check(cause, facts, "queue KMS key", CONTRADICTS, "the queue is not encrypted with a KMS key now")
    verdict = key_verdict(key, topic_arn, placement.delivery_principal(topic_arn, queue_arn))
    checked = "key policy" if verdict.state in {USABLE, POLICY_DENIES, UNSURE} else "queue KMS key"
    outcome = _KEY_OUTCOMES.get((cause, verdict.state))
    present = verdict.state in _PRESENT and cause in {causes.KMS_DISABLED, causes.KMS_NOT_FOUND}
    if outcome is None:
        # an enabled key contradicts "disabled"/"not found"; another key problem is said, not confirmed
        outcome = CONTRADICTS if verdict.state == USABLE or present else INCONCLUSIVE
    if present:
        detail = f"KMS key {key.key} is {key.state or 'readable'} now"
    else:
        detail = verdict.detail + (" (changed since the failure?)" if verdict.state == USABLE else "")
    return _check(cause, facts, checked, outcome, detail)


_PRESENT = frozenset({USABLE, POLICY_DENIES, UNSURE, AWS_MANAGED, WRONG_KIND})  # the key exists and is enabled
_KEY_OUTCOMES = {
    (causes.KMS_ACCESS, AWS_MANAGED): CONFIRMS,
    (causes.KMS_ACCESS, POLICY_DENIES): CONFIRMS,
    (causes.KMS_ACCESS, UNSURE): INCONCLUSIVE,
    (causes.KMS_ACCESS, UNREAD): INCONCLUSIVE,
    (causes.KMS_DISABLED, DISABLED): CONFIRMS,
    (causes.KMS_DISABLED, UNREAD): INCONCLUSIVE,
    (causes.KMS_NOT_FOUND, NOT_FOUND): CONFIRMS,
    (causes.KMS_NOT_FOUND, UNREAD): INCONCLUSIVE,
    (causes.KMS_KEY_USAGE, WRONG_KIND): CONFIRMS,
    (causes.KMS_KEY_USAGE, UNREAD): INCONCLUSIVE,
    # "does not exist or you are not allowed to access": the live key tells which of the two it was
    (causes.KMS_GONE_OR_DENIED, NOT_FOUND): CONFIRMS,
    (causes.KMS_GONE_OR_DENIED, DISABLED): CONFIRMS,
    (causes.KMS_GONE_OR_DENIED, AWS_MANAGED): CONFIRMS,
    (causes.KMS_GONE_OR_DENIED, POLICY_DENIES): CONFIRMS,
    (causes.KMS_GONE_OR_DENIED, UNSURE): INCONCLUSIVE,
    (causes.KMS_GONE_OR_DENIED, UNREAD): INCONCLUSIVE,
}
