"""Pure: whose an object is. Many definitions sets share one Datadog org; each names itself by a namespace, and
obs writes it into every object's ownership marker and reads and touches only the objects that carry its own.

The marker, wherever a kind keeps it:

    tags          managed-by:obs  obs-namespace:payments-jobs  obs-key:prod/critical/age
    a last line   managed-by:obs obs-namespace:payments-jobs obs-key:prod/critical/age
    ad-hoc        managed-by:obs-maintenance obs-namespace:payments-jobs obs-adhoc:prod/critical/age

A set that declares no namespace writes the marker without `obs-namespace:` (as obs did before namespaces), and
owns only objects without one. Namespaces are compared whole, never by prefix, and their pattern admits one
spelling of each (lowercase), so no namespace can pass for another.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from sync.core.keys import Key

NAMESPACE_PATTERN = r"^[a-z](?:[a-z0-9]|-(?=[a-z0-9])){0,39}$"  # 1 to 40: lowercase, digits, single inner hyphens
_NAMESPACE = re.compile(NAMESPACE_PATTERN)
MANAGED_TAG = "managed-by:obs"
KEY_TAG_PREFIX = "obs-key:"
NAMESPACE_TAG_PREFIX = "obs-namespace:"
_LINE = re.compile(r"managed-by:obs(?: obs-namespace:(?P<ns>\S+))? obs-key:(?P<key>\S+)")
_ADHOC_LINE = re.compile(r"managed-by:obs-maintenance(?: obs-namespace:(?P<ns>\S+))? obs-adhoc:(?P<key>\S+)")


def valid(namespace: str) -> bool:
    return bool(_NAMESPACE.fullmatch(namespace))


@dataclass(frozen=True)
class Mark:
    """What an object's ownership marker says: its key, and the namespace of the set that wrote it (None: a set
    that declares none, or obs before namespaces)."""

    key: str
    namespace: str | None = None


@dataclass(frozen=True)
class Ownership:
    """The objects a definitions set owns: those marked with its namespace; with `adopt_unnamespaced`, those
    marked without one too, which its next sync takes over (writes its namespace into, keeping their IDs)."""

    namespace: str | None = None
    adopt_unnamespaced: bool = False

    def key(self, mark: Mark | None) -> str | None:
        """The key of a marked object this set owns or takes over; None for any other."""
        if mark is None:
            return None
        if mark.namespace == self.namespace or (mark.namespace is None and self.adopt_unnamespaced):
            return mark.key
        return None

    def takes_over(self, mark: Mark | None) -> bool:
        """Whether the object is one this set owns only by taking it over (marked without a namespace)."""
        return mark is not None and mark.namespace is None and self.namespace is not None and self.adopt_unnamespaced

    def tags(self, key: str) -> list[str]:
        """The marker tags of an object of this set."""
        return [*self.monitor_tags(), f"{KEY_TAG_PREFIX}{key}"]

    def line(self, key: str) -> str:
        """The marker line (the last of a message or description) of an object of this set."""
        spaced = f" {NAMESPACE_TAG_PREFIX}{self.namespace}" if self.namespace else ""
        return f"{MANAGED_TAG}{spaced} {KEY_TAG_PREFIX}{key}"

    def adhoc_line(self, key: str) -> str:
        """The marker line of an ad-hoc downtime (obs maintenance start) of this set."""
        spaced = f" {NAMESPACE_TAG_PREFIX}{self.namespace}" if self.namespace else ""
        return f"managed-by:obs-maintenance{spaced} obs-adhoc:{key}"

    def adhoc_key(self, text: str) -> str | None:
        """The key of an ad-hoc downtime of this set, from its message's last line; None for any other."""
        mark = _from_line(text, _ADHOC_LINE)
        return mark.key if mark is not None and mark.namespace == self.namespace else None

    def monitor_tags(self) -> list[str]:
        """The tags that pick this set's monitors (and no other set's) where a filter or a downtime names them."""
        return [MANAGED_TAG, f"{NAMESPACE_TAG_PREFIX}{self.namespace}"] if self.namespace else [MANAGED_TAG]


NO_NAMESPACE = Ownership()


def from_tags(tags: Iterable[str]) -> Mark | None:
    """The mark of an object's tags: both marker tags, at most one namespace tag. Two keys or two namespaces, or a
    namespace no set can declare, count as no mark at all."""
    tags = list(tags)
    keys = [t.removeprefix(KEY_TAG_PREFIX) for t in tags if t.startswith(KEY_TAG_PREFIX)]
    spaces = [t.removeprefix(NAMESPACE_TAG_PREFIX) for t in tags if t.startswith(NAMESPACE_TAG_PREFIX)]
    if MANAGED_TAG not in tags or len(keys) != 1 or not keys[0] or len(spaces) > 1:
        return None
    if spaces and not valid(spaces[0]):
        return None
    return Mark(keys[0], spaces[0] if spaces else None)


def from_line(text: str) -> Mark | None:
    """The mark of a message's or description's marker line. Only the last line counts: obs writes it after any
    user text, so text above it (a pasted marker, say) can neither forge ownership nor break it."""
    return _from_line(text, _LINE)


def _from_line(text: str, pattern: re.Pattern[str]) -> Mark | None:
    lines = str(text or "").rstrip().splitlines()
    found = pattern.fullmatch(lines[-1].strip()) if lines else None
    if found is None or Key.parse(found["key"]) is None:
        return None
    namespace = found["ns"]
    if namespace is not None and not valid(namespace):
        return None
    return Mark(found["key"], namespace)
