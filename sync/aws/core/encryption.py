"""Can SNS encrypt for a queue: the queue's KMS key judged once, for obs audit and obs trace alike (pure)."""

from __future__ import annotations

from dataclasses import dataclass

from sync.aws.core.facts import KeyFacts
from sync.aws.core.policy import key_policy_allows

USABLE = "usable"
AWS_MANAGED = "aws-managed"  # alias/aws/sqs: its policy cannot admit SNS
NOT_FOUND = "not-found"
DISABLED = "disabled"  # disabled, pending deletion or otherwise unusable
WRONG_KIND = "wrong-kind"  # not a symmetric encryption key: SQS cannot use it for anyone
POLICY_DENIES = "policy-denies"
UNSURE = "unsure"  # the policy uses something obs does not evaluate
UNREAD = "unread"  # the key or its policy could not be read

UNUSABLE_STATES = frozenset({"Disabled", "PendingDeletion", "PendingReplicaDeletion", "Unavailable", "PendingImport"})


@dataclass(frozen=True)
class KeyVerdict:
    state: str  # one of the constants above
    detail: str


def key_verdict(key: KeyFacts, topic_arn: str, principal: str = "") -> KeyVerdict:
    """Whether SNS (as `principal`) can use the key on behalf of the topic, and why not."""
    name = f"KMS key {key.key}"
    if key.unread:
        return KeyVerdict(UNREAD, f"{name}: {key.unread}")
    if key.state == "NotFound":
        return KeyVerdict(NOT_FOUND, f"{name} does not exist")
    if key.state in UNUSABLE_STATES:
        return KeyVerdict(DISABLED, f"{name} is {key.state}")
    if key.manager == "AWS":
        return KeyVerdict(AWS_MANAGED, f"the AWS-managed {name}, whose policy cannot allow SNS")
    if (key.usage and key.usage != "ENCRYPT_DECRYPT") or (key.spec and key.spec != "SYMMETRIC_DEFAULT"):
        kind = f"{key.spec or '?'} for {key.usage or '?'}"
        return KeyVerdict(WRONG_KIND, f"{name} is {kind}, not a symmetric encryption key")
    verdict = key_policy_allows(key.policy, topic_arn, principal)
    state = {True: USABLE, False: POLICY_DENIES, None: UNSURE}[verdict.allows]
    return KeyVerdict(state, f"{name}: {verdict.reason}")
