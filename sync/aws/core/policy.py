"""Does a queue policy let a topic send, does a key policy let SNS encrypt (pure, deliberately partial)."""

from __future__ import annotations

import fnmatch
import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from sync.expand import placement

_NOT_ELEMENTS = ("NotPrincipal", "NotAction", "NotResource")
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
    service: str = ""  # the SNS principal when the caller knows the region pair; else the topic's

    @property
    def principal(self) -> str:
        return self.service or placement.delivery_principal(self.source_arn, self.resource)


def load_policy(text: str) -> list[dict[str, Any]]:
    try:
        doc = json.loads(text) if text else {}
    except ValueError:
        return []
    statements = doc.get("Statement", []) if isinstance(doc, dict) else []
    statements = [statements] if isinstance(statements, dict) else statements
    return [s for s in statements if isinstance(s, dict)]


def queue_policy_allows(policy: str, queue_arn: str, topic_arn: str, principal: str = "") -> Verdict:
    account = topic_arn.split(":")[4] if topic_arn.count(":") >= 5 else ""
    request = Request(("sqs:SendMessage",), queue_arn, topic_arn, account, principal)
    if not policy:
        return Verdict(False, "the queue has no access policy, so no service may send to it")
    return evaluate(load_policy(policy), request, what="queue policy")


def key_policy_allows(policy: str, topic_arn: str, principal: str = "") -> Verdict:
    account = topic_arn.split(":")[4] if topic_arn.count(":") >= 5 else ""
    request = Request(("kms:GenerateDataKey", "kms:Decrypt"), "*", topic_arn, account, principal)
    return evaluate(load_policy(policy), request, what="key policy")


def evaluate(statements: list[dict[str, Any]], request: Request, what: str) -> Verdict:
    """Explicit deny wins; a deny we cannot judge makes the answer unknown, never 'allows'; then any allow."""
    allowed: set[str] = set()
    may_deny = may_allow = ""  # what obs could not judge, by the way it could tip the answer
    principal = request.principal
    for statement in statements:
        negated = [name for name in _NOT_ELEMENTS if name in statement]
        if negated:
            may_deny = may_deny or f"a statement uses {negated[0]}"
            continue
        for action, effect, condition in _applying(statement, request):
            if effect == "deny" and condition:
                return Verdict(False, f"the {what} has a Deny statement for {principal} {action}")
            if effect == "deny" and condition is None:
                may_deny = may_deny or "a Deny statement has a condition obs does not evaluate"
            elif condition is None:
                may_allow = may_allow or "an Allow statement has a condition obs does not evaluate"
            elif effect == "allow" and condition:
                allowed.add(action)
    missing = sorted(set(request.actions) - allowed)
    if may_deny or (missing and may_allow):
        return Verdict(None, f"the {what} is beyond obs ({may_deny or may_allow}); read it by hand")
    if not missing:
        return Verdict(True, f"the {what} allows {principal} {', '.join(request.actions)}")
    detail = f" from {request.source_arn}" if request.source_arn else ""
    return Verdict(False, f"the {what} does not allow {principal} {', '.join(missing)}{detail}")


def _applying(statement: dict[str, Any], request: Request) -> Iterator[tuple[str, str, bool | None]]:
    """(action, effect, whether the condition holds) for each requested action the statement covers."""
    if not _principal_matches(statement.get("Principal"), request.principal):
        return
    effect = str(statement.get("Effect", "")).lower()
    for action in request.actions:
        if _any_match(statement.get("Action"), action) and _resource_matches(statement, request):
            yield action, effect, _condition_matches(statement.get("Condition"), request)


def _as_list(value: object) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        return [value]
    if isinstance(value, Iterable) and not isinstance(value, dict):
        return [str(v) for v in value]
    return [str(value)]


def _principal_matches(principal: object, service: str) -> bool:
    if principal == "*":
        return True
    if not isinstance(principal, dict):
        return False
    if "*" in _as_list(principal.get("AWS")):
        return True
    return service in _as_list(principal.get("Service"))


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
