"""Pure: who a monitor notifies for each severity, and how that audience changes between two revisions."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import lru_cache

from sync.core.resources import Resource

ALWAYS = "always"  # a handle outside every {{#is_...}} section gets every notification
_ORDER = (ALWAYS, "alert", "warning", "no_data", "recovery", "warning_recovery")

# Sections that filter on a tag or priority rather than name a state: the state comes from around them.
_FILTERS = frozenset({"is_match", "is_exact_match", "is_priority"})
# `{{^is_alert_to_warning}}` inside a warning section: every warning but the step down from an alert. Its
# handles count for the state around it, and are collected apart too under this name (skips_step_down).
SKIPS_STEP_DOWN = "skips_alert_to_warning"
_SECTION = re.compile(r"\{\{\s*([#^/])\s*([\w.]+)[^}]*\}\}")
# @pagerduty-x, @slack-x, @opsgenie-x, @team-x, @webhook-x, and e-mail addresses written @jane@example.com
_HANDLE = re.compile(r"(?<![\w@/.])@[\w.+-]+(?:@[\w-]+(?:\.[\w-]+)+)?")


@dataclass(frozen=True)
class AudienceChange:
    """One notification target of one environment whose monitors changed, for the listed severities."""

    env: str
    severities: tuple[str, ...]
    target: str
    before: int  # monitors that notified the target in the base revision
    after: int
    gained: tuple[str, ...]  # keys of monitors that notify it now and did not before
    lost: tuple[str, ...]

    @property
    def kind(self) -> str:
        return "added" if not self.before else "removed" if not self.after else "changed"


def routes(message: str) -> dict[str, frozenset[str]]:
    """Targets per severity: a handle counts for the innermost condition section around it."""
    return {severity: found for severity, found in sections(message).items() if severity != SKIPS_STEP_DOWN}


@lru_cache(maxsize=4096)  # an evaluation reads the same monitor's message once per run and reading
def sections(message: str) -> Mapping[str, frozenset[str]]:
    """`routes`, and under SKIPS_STEP_DOWN the handles a warning reaches except on the step down from an alert
    (`{{^is_alert_to_warning}}`). Read only: the answer is shared."""
    found: dict[str, set[str]] = {}
    open_sections: list[tuple[str, str | None]] = []  # (condition, severity or None for a filter), innermost last
    at = 0
    for match in _SECTION.finditer(message):
        _collect(message[at : match.start()], open_sections, found)
        at = match.end()
        sign, condition = match.groups()
        names = [name for name, _ in open_sections]
        if sign != "/":
            skip = sign == "^" and condition == "is_alert_to_warning"
            severity = None if condition in _FILTERS or skip else _severity(condition, negated=sign == "^")
            open_sections.append((condition, severity))
        elif condition in names:  # `{{/is_x}}` closes `{{#is_x}}` and `{{^is_x}}` alike
            del open_sections[len(names) - 1 - names[::-1].index(condition) :]
    _collect(message[at:], open_sections, found)
    return {severity: frozenset(targets) for severity, targets in found.items()}


def _collect(text: str, open_sections: list[tuple[str, str | None]], found: dict[str, set[str]]) -> None:
    severity = next((s for _, s in reversed(open_sections) if s is not None), ALWAYS)
    skips = any(condition == "is_alert_to_warning" and s is None for condition, s in open_sections)
    for handle in _HANDLE.findall(text):
        found.setdefault(severity, set()).add(handle.rstrip("."))
        if skips:
            found.setdefault(SKIPS_STEP_DOWN, set()).add(handle.rstrip("."))


def _severity(condition: str, negated: bool) -> str:
    name = condition.removeprefix("is_")
    return f"not_{name}" if negated else name


def severity_order(severity: str) -> tuple[int, str]:
    return (_ORDER.index(severity), "") if severity in _ORDER else (len(_ORDER), severity)


def audience_changes(env: str, base: Iterable[Resource], head: Iterable[Resource]) -> tuple[AudienceChange, ...]:
    """Targets that gained or lost monitors, per severity; severities with the same change share one row."""
    before, after = _audience(base), _audience(head)
    grouped: dict[tuple[str, int, int, tuple[str, ...], tuple[str, ...]], list[str]] = {}
    for severity, target in sorted(before.keys() | after.keys()):
        was, now = before.get((severity, target), set()), after.get((severity, target), set())
        if was != now:
            shape = (target, len(was), len(now), tuple(sorted(now - was)), tuple(sorted(was - now)))
            grouped.setdefault(shape, []).append(severity)
    changes = [
        AudienceChange(env, tuple(sorted(severities, key=severity_order)), *shape)
        for shape, severities in grouped.items()
    ]
    return tuple(sorted(changes, key=lambda c: (severity_order(c.severities[0]), c.target, c.severities)))


def _audience(resources: Iterable[Resource]) -> Mapping[tuple[str, str], set[str]]:
    """(severity, target) -> keys of the monitors that notify the target for that severity."""
    out: dict[tuple[str, str], set[str]] = {}
    for resource in resources:
        if not resource.kind.notifies:
            continue
        for severity, targets in routes(str(resource.body.get("message", ""))).items():
            for target in targets:
                out.setdefault((severity, target), set()).add(resource.key)
    return out
