"""Judge a live topic: it exists, it logs failed SQS deliveries through a working role, FIFO matches (pure)."""

from __future__ import annotations

import fnmatch
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from sync.aws.core.declared import QueueSpec
from sync.aws.core.findings import ERROR, WARNING, Finding
from sync.aws.core.policy import Request, evaluate, load_policy
from sync.expand.placement import sns_principal

LOG_ACTIONS = ("logs:CreateLogGroup", "logs:CreateLogStream", "logs:PutLogEvents")
ROLE_READS = (
    "iam:GetRole",
    "iam:ListRolePolicies",
    "iam:GetRolePolicy",
    "iam:ListAttachedRolePolicies",
    "iam:GetPolicy",
    "iam:GetPolicyVersion",
)
SNS_ROLE_POLICY = "arn:aws:iam::aws:policy/service-role/AmazonSNSRole"  # AWS-managed: grants exactly these


@dataclass(frozen=True)
class RoleFacts:
    """The delivery-status logging role as IAM shows it."""

    arn: str
    exists: bool | None  # None when it could not be read
    trust: str = ""  # the AssumeRolePolicyDocument, as JSON text
    policies: tuple[str, ...] = ()  # every inline and attached policy document, as JSON text
    attached: tuple[str, ...] = ()  # ARNs of attached managed policies
    unread: str = ""
    code: str = ""


@dataclass(frozen=True)
class TopicUse:
    """One declared topic and the queues it feeds."""

    arn: str
    queues: tuple[QueueSpec, ...] = field(default=())

    @property
    def names(self) -> str:
        return ",".join(sorted({q.queue for q in self.queues}))

    @property
    def fifo(self) -> bool:
        return self.arn.endswith(".fifo")

    @property
    def region(self) -> str:
        return self.arn.split(":")[3]


def check_topic(use: TopicUse, live: Mapping[str, str] | None, role: RoleFacts | None) -> list[Finding]:
    """The topic's own settings that decide whether its failed deliveries can be seen and traced."""
    if live is None:
        why = "nothing is delivered to the queues it should feed"
        fix = f"aws sns create-topic --region {use.region} --name {use.arn.rsplit(':', 1)[1]} and subscribe the queues"
        return [Finding(ERROR, "topic-missing", use.names, use.arn, "exists", "does not exist", why, fix)]
    out = _fifo(use, live)
    role_arn = live.get("SQSFailureFeedbackRoleArn", "")
    if not role_arn:
        why = "failed SQS deliveries are not logged, so obs trace cannot say which messages were lost or why"
        fix = (
            f"aws sns set-topic-attributes --region {use.region} --topic-arn {use.arn} --attribute-name "
            "SQSFailureFeedbackRoleArn --attribute-value <role trusted by sns.amazonaws.com with "
            "logs:CreateLogGroup, logs:CreateLogStream, logs:PutLogEvents>"
        )
        out.append(Finding(WARNING, "delivery-logging", use.names, use.arn, "SQS failure logging", "off", why, fix))
    elif role is not None:
        out += check_role(use, role)
    return out


def _fifo(use: TopicUse, live: Mapping[str, str]) -> list[Finding]:
    out = []
    fifo = live.get("FifoTopic", "false").lower() == "true"
    if fifo != use.fifo:
        why = "ordering and deduplication differ from what the queues were declared for"
        fix = "recreate the topic as declared (FifoTopic cannot change), or fix fifo in queues.yaml"
        out.append(Finding(ERROR, "fifo", use.names, use.arn, f"FifoTopic {use.fifo}", f"{fifo}".lower(), why, fix))
    for queue in use.queues:
        if fifo and not queue.fifo:
            why = "a standard queue drops the FIFO topic's ordering and deduplication"
            fix = "declare the queue fifo: true (a new .fifo queue), or accept unordered delivery"
            where = f"{use.arn} -> {queue.name}"
            out.append(Finding(WARNING, "fifo", queue.queue, where, "FIFO queue", "standard queue", why, fix))
        dedup = live.get("ContentBasedDeduplication", "false").lower() == "true"
        wanted = queue.content_based_deduplication
        if fifo and wanted is not None and dedup != wanted:
            why = "SNS deduplicates what it passes on by the topic's setting, not the queue's"
            fix = (
                f"aws sns set-topic-attributes --region {use.region} --topic-arn {use.arn} --attribute-name "
                f"ContentBasedDeduplication --attribute-value {str(wanted).lower()}"
            )
            declared = f"content_based_deduplication {str(wanted).lower()}"
            out.append(
                Finding(ERROR, "content-deduplication", queue.queue, use.arn, declared, f"{dedup}".lower(), why, fix)
            )
    return out


def check_role(use: TopicUse, role: RoleFacts) -> list[Finding]:
    """SNS must be able to assume the role, and the role must be able to write the delivery logs."""
    if role.exists is None:
        why = "obs cannot tell whether SNS can write the delivery logs"
        fix = f"grant the caller {', '.join(ROLE_READS)}"
        return [Finding(WARNING, "delivery-logging-role", use.names, role.arn, "readable", role.unread, why, fix)]
    why = "SNS cannot write the Failure log: failed deliveries go unrecorded although logging looks on"
    if not role.exists:
        fix = "create the role (trusted by sns.amazonaws.com, allowed logs:CreateLogGroup/CreateLogStream/PutLogEvents)"
        return [Finding(ERROR, "delivery-logging-role", use.names, role.arn, "exists", "does not exist", why, fix)]
    out = []
    principal = sns_principal(use.arn)
    request = Request(("sts:AssumeRole",), "*", use.arn, use.arn.split(":")[4], principal)
    trust = evaluate(load_policy(role.trust), request, "trust policy")
    if not trust.allows:
        fix = (
            f"aws iam update-assume-role-policy --role-name {role.arn.rsplit('/', 1)[-1]} --policy-document "
            f'\'{{"Version":"2012-10-17","Statement":[{{"Effect":"Allow","Principal":{{"Service":'
            f'"{principal}"}},"Action":"sts:AssumeRole"}}]}}\''
        )
        severity = ERROR if trust.allows is False else WARNING
        out.append(
            Finding(
                severity,
                "delivery-logging-role",
                use.names,
                role.arn,
                f"{principal} may assume it",
                trust.reason,
                why,
                fix,
            )
        )
    if SNS_ROLE_POLICY not in role.attached:
        resources = log_resources(use.arn)
        missing = [a for a in LOG_ACTIONS if not _identity_allows(role.policies, a, resources)]
        if missing:
            fix = f"aws iam attach-role-policy --role-name {role.arn.rsplit('/', 1)[-1]} --policy-arn {SNS_ROLE_POLICY}"
            live = f"no {', '.join(missing)}"
            out.append(
                Finding(ERROR, "delivery-logging-role", use.names, role.arn, ", ".join(LOG_ACTIONS), live, why, fix)
            )
    return out


def log_resources(topic_arn: str) -> tuple[str, ...]:
    """The ARNs SNS writes the topic's Failure log as: the group, and a stream in it."""
    _, partition, _, region, account, name = topic_arn.split(":", 5)
    group = f"arn:{partition}:logs:{region}:{account}:log-group:sns/{region}/{account}/{name}/Failure"
    return group, f"{group}:*", f"{group}:log-stream:0"


def _identity_allows(policies: Sequence[str], action: str, resources: Sequence[str]) -> bool:
    """An Allow for the action on the delivery log group, and no Deny (conditions count as not allowing)."""
    allowed = False
    for text in policies:
        for statement in load_policy(text):
            if any(k in statement for k in ("NotAction", "NotResource")) or statement.get("Condition"):
                continue
            where = statement.get("Resource")
            if not _matches(statement.get("Action"), action) or not any(_matches(where, r) for r in resources):
                continue
            if str(statement.get("Effect", "")).lower() == "deny":
                return False
            allowed = True
    return allowed


def _matches(patterns: object, value: str) -> bool:
    values = [patterns] if isinstance(patterns, str) else patterns if isinstance(patterns, list) else []
    return any(fnmatch.fnmatchcase(value.lower(), str(p).lower()) for p in values)
