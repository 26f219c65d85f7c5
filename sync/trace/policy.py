"""Does a queue policy let a topic send, does a key policy let SNS encrypt (pure, deliberately partial)."""

from __future__ import annotations

import fnmatch
import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

SNS_PRINCIPAL = "sns.amazonaws.com"
_SOURCE_KEYS = {"aws:sourcearn", "aws:sourceowner", "aws:sourceaccount"}
_UNDERSTOOD = {"arnequals", "arnlike", "stringequals", "stringlike"}


@dataclass(frozen=True)
class Verdict:
    """allows: True/False when the policy decides, None when it uses something we do not evaluate."""

    allows: bool | None
    reason: str


@dataclass(frozen=True)
class Request:
    """The call SNS makes: an action on a resource, from a source ARN in an account."""

    actions: tuple[str, ...]
    resource: str
    source_arn: str
    source_account: str


def load_policy(text: str) -> list[dict[str, Any]]:
    try:
        doc = json.loads(text) if text else {}
    except ValueError:
        return []
    statements = doc.get("Statement", []) if isinstance(doc, dict) else []
    statements = [statements] if isinstance(statements, dict) else statements
    return [s for s in statements if isinstance(s, dict)]


def queue_policy_allows(policy: str, queue_arn: str, topic_arn: str) -> Verdict:
    account = topic_arn.split(":")[4] if topic_arn.count(":") >= 5 else ""
    request = Request(("sqs:SendMessage",), queue_arn, topic_arn, account)
    if not policy:
        return Verdict(False, "the queue has no access policy, so no service may send to it")
    return evaluate(load_policy(policy), request, what="queue policy")


def key_policy_allows(policy: str, topic_arn: str) -> Verdict:
    account = topic_arn.split(":")[4] if topic_arn.count(":") >= 5 else ""
    request = Request(("kms:GenerateDataKey", "kms:Decrypt"), "*", topic_arn, account)
    return evaluate(load_policy(policy), request, what="key policy")


def evaluate(statements: list[dict[str, Any]], request: Request, what: str) -> Verdict:
    """Explicit deny wins, then any allow; conditions we cannot judge make the answer unknown."""
    allowed: set[str] = set()
    unknown = False
    for statement in statements:
        if not _principal_matches(statement.get("Principal")):
            continue
        effect = str(statement.get("Effect", "")).lower()
        for action in request.actions:
            if not _any_match(statement.get("Action"), action) or not _resource_matches(statement, request):
                continue
            condition = _condition_matches(statement.get("Condition"), request)
            if effect == "deny" and condition:
                return Verdict(False, f"the {what} has a Deny statement for {SNS_PRINCIPAL} {action}")
            if condition is None:
                unknown = True
            elif effect == "allow" and condition:
                allowed.add(action)
    missing = sorted(set(request.actions) - allowed)
    if not missing:
        return Verdict(True, f"the {what} allows {SNS_PRINCIPAL} {', '.join(request.actions)}")
    if unknown:
        return Verdict(None, f"the {what} has conditions obs does not evaluate; read it by hand")
    detail = f" from {request.source_arn}" if request.source_arn else ""
    return Verdict(False, f"the {what} does not allow {SNS_PRINCIPAL} {', '.join(missing)}{detail}")


def _as_list(value: object) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        return [value]
    if isinstance(value, Iterable) and not isinstance(value, dict):
        return [str(v) for v in value]
    return [str(value)]


def _principal_matches(principal: object) -> bool:
    if principal == "*":
        return True
    if not isinstance(principal, dict):
        return False
    if "*" in _as_list(principal.get("AWS")):
        return True
    return SNS_PRINCIPAL in _as_list(principal.get("Service"))


def _any_match(patterns: object, value: str) -> bool:
    return any(fnmatch.fnmatchcase(value.lower(), p.lower()) for p in _as_list(patterns))


def _resource_matches(statement: dict[str, Any], request: Request) -> bool:
    if request.resource == "*" or "Resource" not in statement:
        return True
    return any(fnmatch.fnmatchcase(request.resource, p) for p in _as_list(statement.get("Resource")))


def _condition_matches(condition: object, request: Request) -> bool | None:
    """True/False when every condition is one we understand, None otherwise."""
    if not condition:
        return True
    if not isinstance(condition, dict):
        return None
    values = {"aws:sourcearn": request.source_arn, "aws:sourceowner": request.source_account}
    values["aws:sourceaccount"] = request.source_account
    for operator, tests in condition.items():
        if str(operator).lower() not in _UNDERSTOOD or not isinstance(tests, dict):
            return None
        for key, expected in tests.items():
            if str(key).lower() not in _SOURCE_KEYS:
                return None
            actual = values[str(key).lower()]
            if not actual or not any(fnmatch.fnmatchcase(actual, p) for p in _as_list(expected)):
                return False
    return True
