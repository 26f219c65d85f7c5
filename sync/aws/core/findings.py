"""What obs audit reports: one misconfiguration of the live wiring, why it matters, and its fix (pure)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

ERROR, WARNING, INFO = "error", "warning", "info"
SEVERITIES = (ERROR, WARNING, INFO)  # most serious first
_RANK = {name: index for index, name in enumerate(SEVERITIES)}


@dataclass(frozen=True)
class Finding:
    """One thing the live AWS wiring does differently from the definitions, or does dangerously."""

    severity: str  # error: messages are or will be lost; warning: risky or unverifiable; info: worth knowing
    check: str  # a stable name of the check, e.g. "redrive-policy"
    queue: str  # the logical queue(s) concerned, comma-separated for a topic feeding several
    resource: str  # the AWS name or ARN looked at
    declared: str
    live: str
    why: str
    fix: str

    @property
    def sort_key(self) -> tuple[int, str, str, str, str]:
        return (_RANK[self.severity], self.queue, self.check, self.resource, self.live)


def at_least(findings: Iterable[Finding], severity: str) -> tuple[Finding, ...]:
    """The findings at `severity` or more serious, in report order, each once."""
    floor = _RANK[severity]
    return tuple(sorted({f for f in findings if _RANK[f.severity] <= floor}, key=lambda f: f.sort_key))
