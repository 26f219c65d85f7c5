"""Pure: the field changes from a live object to a desired body, by its kind's rules (`Kind.diff`).

Only what obs owns is compared: the desired body's keys, and the keys obs may have set before but leaves out
now. The server's known rewrites are undone first (defaults filled in, `2` vs `2.0`, trimmed text, ids, null
vs absent, list order, the kind's aliases and spellings), so that a plan right after a sync is empty.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from sync.core.kinds import Diff, Kind

_ABSENT = object()
_INDEX = re.compile(r"\[\d+\]")


@dataclass(frozen=True)
class FieldChange:
    path: str
    old: Any
    new: Any


def diff(kind: Kind, desired: Mapping[str, Any], live: Mapping[str, Any]) -> tuple[FieldChange, ...]:
    """Field changes from live to desired, as dotted paths, over what obs owns: the desired body's keys, and
    the keys obs may have set before but leaves out now (a removed warning threshold, a renotify interval
    set to 0), so that a live value left from an older definition is not kept by mistake."""
    found: list[FieldChange] = []
    _diff(kind.diff, desired, live, "", found)
    return tuple(found)


def same(kind: Kind, path: str, desired: Any, live: Any) -> bool:
    """Whether two values of one field are alike once the server's rewrites are undone."""
    return desired == live or bool(_normal(kind.diff, desired, path) == _normal(kind.diff, live, path))


def _diff(rules: Diff, want: Any, have: Any, path: str, found: list[FieldChange]) -> None:
    if want == have:  # equal values normalise alike (2 == 2.0 too): nearly every field of an unchanged object
        return
    if isinstance(want, Mapping) and isinstance(have, Mapping):
        owned = set(want) | {k for k in have if k not in want and _owned_when_absent(rules, path, k)}
        for key in sorted(owned):
            inner, held = want.get(key, _ABSENT), have.get(key, _ABSENT)
            if key != "id" and inner != held:  # ids are the server's, at any depth (a dashboard's, its widgets')
                _diff(rules, inner, held, _join(path, key), found)
        return
    unordered = path in rules.unordered
    if isinstance(want, list) and isinstance(have, list) and len(want) == len(have) and not unordered:
        for index, (w, h) in enumerate(zip(want, have, strict=True)):
            _diff(rules, w, h, f"{path}[{index}]", found)
        return
    if _normal(rules, want, path) != _normal(rules, have, path):
        found.append(FieldChange(path, None if have is _ABSENT else have, None if want is _ABSENT else want))


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else str(key)


def _owned_when_absent(rules: Diff, parent: str, key: str) -> bool:
    """Whether obs owns a key the desired body leaves out: asked of every key the server adds to every object
    (its id, creator, dates), so the answers are kept, by place."""
    known = rules.absent_owned.get((parent, key))
    if known is None:
        path = _join(parent, key)
        whole = path.startswith(rules.inside_whole)
        known = whole or (_INDEX.sub("[]", path) if "[" in path else path) in rules.owned_when_absent
        rules.absent_owned[parent, key] = known
    return known


def _normal(rules: Diff, value: Any, path: str) -> Any:
    """The comparable form of a leaf: the server's rewrites undone."""
    if value is _ABSENT or value is None or value == {}:
        return None  # null, absent and an empty mapping (the server drops `thresholds: {}`) mean the same
    if path in rules.zero_is_unset and value == 0:
        return None  # e.g. the server stores priority 0 as null
    if isinstance(value, bool):
        return value
    if isinstance(value, int | float):
        return float(value)  # thresholds come back as floats: 2 == 2.0
    if isinstance(value, str):
        text = value.strip()  # name, message and query are trimmed server-side
        if rules.rrules and path.rpartition(".")[2] in rules.rrules:
            return sorted(p for p in text.upper().split(";") if p)  # the parts of an RRULE in any order
        if path in rules.moments:
            return _moment(text)
        aliases = rules.aliases.get(path)
        return aliases.get(text, text) if aliases else text
    if isinstance(value, list):
        items = [_normal(rules, v, path) for v in value]
        return sorted(map(repr, items)) if path in rules.unordered else items
    if isinstance(value, Mapping):
        return {k: _normal(rules, v, path) for k, v in value.items() if k != "id" and v is not None}
    return value


def _moment(text: str) -> str:
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return text
    return moment.astimezone(UTC).isoformat() if moment.tzinfo else text
