"""Read, with read-only calls, every queue, DLQ, topic, subscription and logging role an environment declares."""

from __future__ import annotations

import json
from collections.abc import Iterable
from urllib.parse import unquote

from botocore.exceptions import ClientError

from sync.aws.core.audit import Attributes, Listed, Survey
from sync.aws.core.declared import QueueSpec
from sync.aws.core.facts import QueueFacts
from sync.aws.core.topics import ROLE_READS, SNS_ROLE_POLICY, RoleFacts
from sync.aws.reads.clients import DENIED, Clients, aws_errors, error_code
from sync.aws.reads.facts import queue_facts
from sync.errors import ObsError


def survey(clients: Clients, specs: Iterable[QueueSpec], account: str) -> Survey:
    """Everything live the specs name, read as `account` (the credentials' account)."""
    specs = tuple(specs)
    arns = sorted(
        {s.arn for s in specs}
        | {s.dlq_arn for s in specs if s.dlq_arn}
        | {t.subscription_dlq_arn for s in specs for t in s.topics if t.subscription_dlq_arn}
    )
    queues = {arn: read_queue(clients, arn, arn.split(":")[4]) for arn in arns}
    topic_arns = sorted({t.arn for s in specs for t in s.topics})
    topics = {arn: read_topic(clients, arn) for arn in topic_arns}
    subscriptions: dict[tuple[str, str], Listed] = {}
    for arn in topic_arns:
        if topics[arn] is not None:
            wanted = frozenset(s.arn for s in specs for t in s.topics if t.arn == arn)
            subscriptions.update(read_subscriptions(clients, arn, wanted))
    roles = {
        role: read_role(clients, role, account)
        for role in sorted({a.get("SQSFailureFeedbackRoleArn", "") for a in topics.values() if a} - {""})
    }
    return Survey(queues, topics, subscriptions, roles)


def read_queue(clients: Clients, arn: str, account: str) -> QueueFacts:
    """The queue's attributes and key; access denied is an error naming the permission, not a finding."""
    facts = queue_facts(clients, arn, account)
    if facts.code in DENIED:
        raise _denied("sqs:GetQueueUrl and sqs:GetQueueAttributes", arn, facts.unread)
    if facts.key is not None and facts.key.code in DENIED:
        permission = facts.key.unread.split(" ", 1)[0]  # "kms:DescribeKey failed (...)" names its call
        raise _denied(permission, facts.key.key, facts.key.unread)
    return facts


def _denied(permission: str, resource: str, detail: str) -> ObsError:
    return ObsError.of(
        f"cannot audit {resource}: access denied ({detail})",
        f"grant the caller {permission} on it (docs/setup/aws.md lists the read-only policy obs audit needs)",
    )


def read_topic(clients: Clients, arn: str) -> Attributes | None:
    sns = clients.in_region(arn.split(":")[3]).sns
    with aws_errors(f"read topic {arn}", "sns:GetTopicAttributes"):
        try:
            attributes = sns.get_topic_attributes(TopicArn=arn).get("Attributes", {})
        except ClientError as exc:
            if error_code(exc) in {"NotFound", "NotFoundException"}:
                return None
            raise
    return dict(attributes)


def read_subscriptions(clients: Clients, topic_arn: str, wanted: frozenset[str]) -> dict[tuple[str, str], Listed]:
    """The topic's SQS subscriptions to the `wanted` queue ARNs, with their attributes."""
    sns = clients.in_region(topic_arn.split(":")[3]).sns
    out: dict[tuple[str, str], Listed] = {}
    with aws_errors(f"list the subscriptions of {topic_arn}", "sns:ListSubscriptionsByTopic"):
        pages = sns.get_paginator("list_subscriptions_by_topic").paginate(TopicArn=topic_arn)
        listed = sorted(
            (s.get("Endpoint", ""), s.get("SubscriptionArn", ""))
            for page in pages
            for s in page.get("Subscriptions", [])
            if s.get("Protocol") == "sqs" and s.get("Endpoint", "") in wanted
        )
    for endpoint, arn in listed:
        attributes: Attributes = {"PendingConfirmation": "true"}
        if arn.startswith("arn:"):
            with aws_errors(f"read subscription {arn}", "sns:GetSubscriptionAttributes"):
                attributes = dict(sns.get_subscription_attributes(SubscriptionArn=arn).get("Attributes", {}))
        out.setdefault((topic_arn, endpoint), Listed(arn, attributes))
    return out


def read_role(clients: Clients, arn: str, account: str) -> RoleFacts:
    """The logging role's trust policy and every policy attached to it; unreadable is said, not guessed."""
    if arn.count(":") < 5 or arn.split(":")[4] != account:
        return RoleFacts(arn, None, unread=f"the role is not in account {account}, whose credentials obs uses")
    name = arn.rsplit("/", 1)[-1]
    iam = clients.iam
    try:
        role = iam.get_role(RoleName=name)["Role"]
        if role.get("Arn", arn) != arn:
            return RoleFacts(arn, None, unread=f"the role is in another account than the credentials ({role['Arn']})")
        inline = [
            iam.get_role_policy(RoleName=name, PolicyName=policy)["PolicyDocument"]
            for page in iam.get_paginator("list_role_policies").paginate(RoleName=name)
            for policy in page.get("PolicyNames", [])
        ]
        attached = sorted(
            p.get("PolicyArn", "")
            for page in iam.get_paginator("list_attached_role_policies").paginate(RoleName=name)
            for p in page.get("AttachedPolicies", [])
        )
        documents = [policy_document(d) for d in inline]
        for policy_arn in attached:
            if policy_arn == SNS_ROLE_POLICY:
                continue
            version = iam.get_policy(PolicyArn=policy_arn)["Policy"].get("DefaultVersionId", "v1")
            text = iam.get_policy_version(PolicyArn=policy_arn, VersionId=version)["PolicyVersion"].get("Document")
            documents.append(policy_document(text))
    except ClientError as exc:
        code = error_code(exc)
        if code in {"NoSuchEntity", "NoSuchEntityException"}:
            return RoleFacts(arn, False)
        return RoleFacts(arn, None, unread=f"IAM read failed ({code}; needs {', '.join(ROLE_READS)})", code=code)
    trust = policy_document(role.get("AssumeRolePolicyDocument"))
    return RoleFacts(arn, True, trust, tuple(documents), tuple(attached))


def policy_document(value: object) -> str:
    """IAM returns policy documents URL-encoded; boto3 usually decodes them to a dict already."""
    if isinstance(value, str):
        return unquote(value)
    return json.dumps(value, sort_keys=True) if value is not None else ""
