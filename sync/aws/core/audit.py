"""Judge an environment's surveyed live wiring against what its definitions declare (pure)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from sync.aws.core.declared import QueueSpec
from sync.aws.core.delivery import Target, check_encryption, check_queue_policy, check_subscription
from sync.aws.core.facts import QueueFacts
from sync.aws.core.findings import WARNING, Finding
from sync.aws.core.topics import RoleFacts, TopicUse, check_topic
from sync.aws.core.wiring import check_dlq_retention, check_queue, missing

Attributes = Mapping[str, str]


@dataclass(frozen=True)
class Listed:
    arn: str  # "PendingConfirmation" until confirmed
    attributes: Attributes


@dataclass(frozen=True)
class Survey:
    """What is live, keyed by ARN; None where the resource does not exist."""

    queues: Mapping[str, QueueFacts]
    topics: Mapping[str, Attributes | None]
    subscriptions: Mapping[tuple[str, str], Listed]  # (topic ARN, queue ARN)
    roles: Mapping[str, RoleFacts]


# What the monitors are built on: the retention the retention-risk monitor divides by, and the DLQs the DLQ
# monitors watch. obs plan --live reports these before the plan.
MONITORED = frozenset(
    {
        "queue-missing",
        "dlq-missing",
        "redrive-policy",
        "max-receive-count",
        "retention",
        "dlq-retention",
        "subscription-dlq",
    }
)


def monitored(findings: Sequence[Finding]) -> tuple[Finding, ...]:
    return tuple(f for f in findings if f.check in MONITORED)


@dataclass(frozen=True)
class AuditResult:
    env: str
    account: str
    region: str
    queues: tuple[str, ...]  # the logical queues audited
    findings: tuple[Finding, ...]  # every finding, in report order


def _key(finding: Finding) -> tuple[int, str, str, str, str]:
    return finding.sort_key


def in_report_order(found: Sequence[Finding]) -> tuple[Finding, ...]:
    """Each finding once, most severe first."""
    return tuple(sorted(set(found), key=_key))


def judge(specs: Sequence[QueueSpec], live: Survey) -> list[Finding]:
    """Every finding for the declared queues, from what was read (pure)."""
    out: list[Finding] = []
    for spec in specs:
        out += _queue(spec, live)
        out += _subscriptions(spec, live)
    uses: dict[str, list[QueueSpec]] = {}
    for spec in specs:
        for topic in spec.topics:
            uses.setdefault(topic.arn, []).append(spec)
    for arn, queues in sorted(uses.items()):
        attributes = live.topics.get(arn)
        role = live.roles.get(attributes.get("SQSFailureFeedbackRoleArn", "")) if attributes else None
        out += check_topic(TopicUse(arn, tuple(queues)), attributes, role)
    return out


def _unread(spec: QueueSpec, facts: QueueFacts, name: str) -> Finding:
    why = "obs cannot judge what it cannot read"
    return Finding(WARNING, "unreadable", spec.queue, name, "readable", facts.unread, why, "check the queue by hand")


def _queue(spec: QueueSpec, live: Survey) -> list[Finding]:
    facts = live.queues[spec.arn]
    topics = [t.arn for t in spec.topics]
    if facts.exists is False:
        fix = f"aws sqs create-queue --region {spec.region} --queue-name {spec.name} (with the declared attributes)"
        return [missing(spec, "queue", spec.name, "publishers and SNS have nowhere to put messages", fix)]
    if facts.exists is None:
        return [_unread(spec, facts, spec.name)]
    out = check_queue(spec, facts.attributes)
    target = Target(spec.queue, spec.name, spec.arn, "queue")
    if topics:
        out += check_queue_policy(target, facts.attributes, topics)
    out += check_encryption(target, facts.attributes, facts.key, topics)
    if spec.dlq_arn and spec.dlq_name:
        dlq = live.queues[spec.dlq_arn]
        if dlq.exists is False:
            why = "the RedrivePolicy points nowhere: failing messages stay in the queue until they expire"
            fix = f"aws sqs create-queue --region {spec.region} --queue-name {spec.dlq_name}"
            out.append(missing(spec, "dlq", spec.dlq_name, why, fix))
        elif dlq.exists is None:
            out.append(_unread(spec, dlq, spec.dlq_name))
        else:
            out += check_dlq_retention(spec, facts.attributes, dlq.attributes)
            out += check_encryption(Target(spec.queue, spec.dlq_name, spec.dlq_arn, "DLQ"), dlq.attributes, dlq.key, [])
    return out


def _subscriptions(spec: QueueSpec, live: Survey) -> list[Finding]:
    out: list[Finding] = []
    for topic in spec.topics:
        if live.topics.get(topic.arn) is None:
            continue  # the topic's own finding says it is missing
        listed = live.subscriptions.get((topic.arn, spec.arn))
        dlq = live.queues.get(topic.subscription_dlq_arn or "")
        exists = dlq.exists if dlq is not None else None
        out += check_subscription(
            spec, topic, listed.arn if listed else "", listed.attributes if listed else None, exists
        )
        if dlq is not None and dlq.exists and topic.subscription_dlq and topic.subscription_dlq_arn:
            target = Target(spec.queue, topic.subscription_dlq, topic.subscription_dlq_arn, "subscription DLQ")
            out += check_queue_policy(target, dlq.attributes, [topic.arn])
            out += check_encryption(target, dlq.attributes, dlq.key, [topic.arn])
    return out
