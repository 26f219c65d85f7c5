"""Can each declared topic reach its queue: queue policy, SSE key, subscription and its DLQ (pure)."""

from __future__ import annotations

import json
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from sync.aws.core.declared import QueueSpec, TopicSpec, queue_url
from sync.aws.core.encryption import DISABLED, NOT_FOUND, POLICY_DENIES, UNREAD, UNSURE, USABLE, WRONG_KIND, key_verdict
from sync.aws.core.facts import KeyFacts
from sync.aws.core.findings import ERROR, INFO, WARNING, Finding
from sync.aws.core.policy import load_policy, queue_policy_allows
from sync.expand.placement import SNS_PRINCIPAL, delivery_principal

MAX_POLICY_STATEMENTS = 20  # SQS: more and subscription delivery fails
_BROKEN_FOR_ALL = frozenset({NOT_FOUND, DISABLED, WRONG_KIND})  # key states no sender at all gets past

Attributes = Mapping[str, str]


@dataclass(frozen=True)
class Target:
    """A queue SNS sends to on behalf of topics: the queue itself or a subscription DLQ."""

    queue: str  # logical queue for the report
    name: str
    arn: str
    role: str  # "queue" or "subscription DLQ"

    @property
    def region(self) -> str:
        return self.arn.split(":")[3]

    @property
    def url(self) -> str:
        return queue_url(self.region, self.arn.split(":")[4], self.name)


def statement_for(queue_arn: str, topic_arn: str) -> str:
    return json.dumps(
        {
            "Effect": "Allow",
            "Principal": {"Service": delivery_principal(topic_arn, queue_arn)},
            "Action": "sqs:SendMessage",
            "Resource": queue_arn,
            "Condition": {"ArnEquals": {"aws:SourceArn": topic_arn}},
        },
        separators=(",", ":"),
    )


def check_queue_policy(target: Target, live: Attributes, topics: Sequence[str]) -> list[Finding]:
    """Each topic may send to the queue, and the policy stays within what SQS accepts."""
    policy = live.get("Policy", "")
    out = []
    for topic in sorted(topics):
        verdict = queue_policy_allows(policy, target.arn, topic, delivery_principal(topic, target.arn))
        if verdict.allows:
            continue
        severity = ERROR if verdict.allows is False else WARNING
        why = "SNS is refused with AccessDenied and does not retry: every message to this queue is lost"
        if verdict.allows is None:
            why = "obs cannot tell whether SNS may send; if not, every message is lost without retry"
        fix = f"add to the Policy of {target.name} the statement {statement_for(target.arn, topic)}"
        out.append(
            Finding(severity, "queue-policy", target.queue, target.name, f"{topic} may send", verdict.reason, why, fix)
        )
    count = len(load_policy(policy))
    if count > MAX_POLICY_STATEMENTS:
        why = "SQS evaluates at most 20 statements: subscription deliveries fail"
        fix = "merge the statements (one statement may list several topic ARNs in aws:SourceArn)"
        live_text = f"{count} statements"
        out.append(Finding(ERROR, "queue-policy-size", target.queue, target.name, "<= 20", live_text, why, fix))
    return out


def check_encryption(target: Target, live: Attributes, key: KeyFacts | None, topics: Sequence[str]) -> list[Finding]:
    """SSE with a key nobody can use, or one SNS may not use while a topic feeds the queue."""
    key_id = live.get("KmsMasterKeyId", "")
    if not key_id or key is None:
        return []
    fix = (
        f"aws sqs set-queue-attributes --region {target.region} --queue-url {target.url} --attributes "
        f"{shlex.quote(json.dumps({'KmsMasterKeyId': '<customer-managed key allowing SNS>'}))} "
        "(or SqsManagedSseEnabled=true with KmsMasterKeyId removed)"
    )
    out: list[Finding] = []
    for topic in sorted(topics) or [""]:
        principal = delivery_principal(topic, target.arn) if topic else SNS_PRINCIPAL
        verdict = key_verdict(key, topic, principal)
        if verdict.state == USABLE or (not topic and verdict.state not in _BROKEN_FOR_ALL):
            continue  # the AWS-managed key and key policies matter only when SNS sends
        severity = WARNING if verdict.state in {UNSURE, UNREAD} else ERROR
        why = (
            "SNS cannot encrypt for the queue: deliveries fail with KMS errors and are not retried"
            if topic
            else "nobody can send to or receive from the queue while its key is unusable"
        )
        key_fix = (
            f'allow Principal {{"Service":"{principal}"}} kms:GenerateDataKey* and kms:Decrypt in the key policy'
            if verdict.state in {UNSURE, POLICY_DENIES}
            else fix
        )
        if verdict.state == DISABLED:
            key_fix = f"aws kms enable-key --key-id {key.key} (or cancel-key-deletion), or {fix}"
        declared = f"{topic} may encrypt" if topic else "a usable key"
        out.append(Finding(severity, "encryption", target.queue, target.name, declared, verdict.detail, why, key_fix))
        if verdict.state in _BROKEN_FOR_ALL:
            break  # the key is unusable for everyone: one finding says it
    return out


def check_subscription(
    spec: QueueSpec, topic: TopicSpec, arn: str, live: Attributes | None, dlq_exists: bool | None
) -> list[Finding]:
    """The topic's subscription to the queue: confirmed, in the declared format, with a usable DLQ."""
    where = f"{topic.arn} -> {spec.name}"
    if live is None:
        why = "the topic delivers nothing to the queue"
        fix = (
            f"aws sns subscribe --region {spec.region} --topic-arn {topic.arn} --protocol sqs "
            f"--notification-endpoint {spec.arn}"
        )
        return [Finding(ERROR, "subscription-missing", spec.queue, where, "subscribed", "no subscription", why, fix)]
    out = []
    if not arn.startswith("arn:") or live.get("PendingConfirmation", "false").lower() == "true":
        why = "SNS delivers nothing until the subscription is confirmed"
        fix = "confirm it from the queue's account (aws sns confirm-subscription) or subscribe again"
        out.append(Finding(ERROR, "subscription-pending", spec.queue, where, "confirmed", "pending", why, fix))
    raw = live.get("RawMessageDelivery", "false").lower() == "true"
    if topic.raw_message_delivery is not None and raw != topic.raw_message_delivery:
        why = "consumers get the body in another format than they parse (SNS envelope vs bare message)"
        fix = (
            f"aws sns set-subscription-attributes --region {spec.region} --subscription-arn {arn} "
            f"--attribute-name RawMessageDelivery --attribute-value {str(topic.raw_message_delivery).lower()}"
        )
        declared = f"raw_message_delivery {str(topic.raw_message_delivery).lower()}"
        out.append(Finding(ERROR, "raw-delivery", spec.queue, where, declared, f"{raw}".lower(), why, fix))
    if live.get("FilterPolicy"):
        why = "messages the filter rejects never reach the queue and are not logged as failures"
        scope = live.get("FilterPolicyScope", "MessageAttributes")
        fix = "nothing to do if intended; NumberOfNotificationsFilteredOut counts what it drops"
        out.append(
            Finding(INFO, "filter-policy", spec.queue, where, "-", f"{scope} filter {live['FilterPolicy']}", why, fix)
        )
    out += _subscription_dlq(spec, topic, arn, live, dlq_exists)
    return out


def _subscription_dlq(
    spec: QueueSpec, topic: TopicSpec, arn: str, live: Attributes, dlq_exists: bool | None
) -> list[Finding]:
    where = f"{topic.arn} -> {spec.name}"
    try:
        doc = json.loads(live.get("RedrivePolicy") or "{}")
    except ValueError:
        doc = {}
    target = str(doc.get("deadLetterTargetArn", "")) if isinstance(doc, dict) else ""
    wanted = topic.subscription_dlq_arn
    if wanted is None:
        if target:
            return []
        why = "a delivery SNS gives up on (policy, KMS, deleted queue) is lost without a trace of the message"
        fix = "declare subscription_dlq on the topic in queues.yaml and set the subscription's RedrivePolicy"
        return [Finding(WARNING, "subscription-dlq", spec.queue, where, "none", "none", why, fix)]
    fix = (
        f"aws sns set-subscription-attributes --region {spec.region} --subscription-arn {arn} "
        f"--attribute-name RedrivePolicy --attribute-value "
        f"{shlex.quote(json.dumps({'deadLetterTargetArn': wanted}, separators=(',', ':')))}"
    )
    why = "messages SNS cannot deliver are dropped instead of parked for replay"
    declared = f"DLQ {topic.subscription_dlq}"
    if target != wanted:
        live_text = f"RedrivePolicy to {target}" if target else "no RedrivePolicy"
        return [Finding(ERROR, "subscription-dlq", spec.queue, where, declared, live_text, why, fix)]
    if dlq_exists is False:
        fix = (
            f"aws sqs create-queue --region {spec.region} --queue-name {topic.subscription_dlq}, "
            "with a policy that allows the topic"
        )
        return [Finding(ERROR, "subscription-dlq", spec.queue, where, declared, "does not exist", why, fix)]
    return []
