"""Pure: a plan as a file that people approve, and what differs when the sync plans again.

`obs plan --out FILE` writes the pending changes exactly: each action, object, ID, field change and body
to write, with a digest of each, and what the plan was made against: the API host, the org of the API key,
the definitions commit and the time. `obs sync --plan FILE` refuses a file made for another org, host,
commit or environment, or older than its --max-age, then plans again against the live org and applies only
if it gets the same changes, one for one; a difference that matters (someone edited a monitor since, a
second copy of an object appeared) refuses the sync instead of applying something nobody approved. Live
edits to fields obs does not own change no plan, so they do not block it.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

import jsonschema

from sync.core.plan import Change, Plan
from sync.errors import ObsError
from sync.report.changes import change_json

FORMAT = "obs-plan/2"
_SHOWN = 5  # differences named in the refusal; the count says how many more
_SKEW = timedelta(minutes=5)  # clocks of the runner that planned and the one that syncs may differ this much
_AGAIN = "write it again with obs plan --out FILE"


@dataclass(frozen=True)
class Binding:
    """What a plan was made against; a plan file applies only where all of it is the same."""

    host: str  # the API base URL
    org: str | None  # the UUID of the API key's org; None where the site does not tell
    commit: str | None  # the definitions' git commit; None outside a checkout
    dirty: bool  # the definitions differ from that commit


def dump(plan: Plan, binding: Binding, now: datetime) -> str:
    doc = {
        "format": FORMAT,
        "env": plan.env,
        "host": binding.host,
        "org": binding.org,
        "commit": binding.commit,
        "dirty": binding.dirty,
        "created_at": now.isoformat(timespec="seconds"),
        "changes": [_saved(c) for c in plan.pending],
    }
    return json.dumps(doc, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def load(text: str, source: str) -> Mapping[str, Any]:
    """The document of a plan file, checked against its schema and its digests: a clear error otherwise."""
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ObsError.of(f"{source} is not a plan file: {exc}", _AGAIN) from None
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise ObsError.of(f"{source} is not a plan file of this obs ({FORMAT})", _AGAIN)
    problem = next(iter(sorted(_VALIDATOR.iter_errors(doc), key=lambda e: list(map(str, e.absolute_path)))), None)
    if problem is not None:
        where = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in problem.absolute_path).lstrip(".")
        raise ObsError.of(f"{source} is not a valid plan file: {where or 'the document'}: {problem.message}", _AGAIN)
    for index, change in enumerate(doc["changes"]):
        if change["digest"] != _digest(change):
            raise ObsError.of(
                f"{source}: changes[{index}] was edited after it was planned (its digest differs)", _AGAIN
            )
    try:
        datetime.fromisoformat(doc["created_at"]).utcoffset()
    except ValueError:
        raise ObsError.of(f"{source}: created_at is not a time: {doc['created_at']!r}", _AGAIN) from None
    return doc


def out_of_place(saved: Mapping[str, Any], env: str, now: datetime, max_age: timedelta) -> list[str]:
    """Why the file cannot apply here and now, before anything is read from the org."""
    if saved["env"] != env:
        return [f"the plan file is for {saved['env']!r}, not {env!r}"]
    made = datetime.fromisoformat(saved["created_at"])
    if made.utcoffset() is None:
        return [f"the plan file's created_at ({saved['created_at']}) names no time zone"]
    if made > now + _SKEW:
        return [f"the plan file was made in the future ({saved['created_at']})"]
    if now - made > max_age:
        age, limit = _hours(now - made), _hours(max_age)
        return [f"the plan file was made {age} ago ({saved['created_at']}), more than --max-age ({limit}) allows"]
    return []


def elsewhere(saved: Mapping[str, Any], binding: Binding) -> list[str]:
    """Where the file was planned, when that is not here: another API host, org or definitions commit."""
    found = []
    if saved["host"] != binding.host:
        found.append(f"the plan file was made against {saved['host']}, not {binding.host}")
    if saved["org"] != binding.org:
        found.append(
            f"the plan file was made for the org {_org(saved['org'])}, but DD_API_KEY is {_org(binding.org)}'s"
        )
    if (saved["commit"], saved["dirty"]) != (binding.commit, binding.dirty):
        was, now = _commit(saved["commit"], saved["dirty"]), _commit(binding.commit, binding.dirty)
        found.append(f"the plan file was made from the definitions {was}, and they are now {now}")
    return found


def differences(saved: Mapping[str, Any], plan: Plan) -> list[str]:
    """What the plan made now does differently from the approved one; [] when it is the same plan: the same
    changes one for one, each to the same live object (ID) with the same body (digest)."""
    was = _grouped(saved["changes"])
    now = _grouped(_saved(c) for c in plan.pending)
    found = []
    for at in sorted(was.keys() | now.keys()):
        old, new = _unmatched(was.get(at, []), now.get(at, []))
        action, kind, key = at
        if len(old) == 1 and len(new) == 1:
            fields = sorted({path for path, _ in _fields(old[0]) ^ _fields(new[0])})
            if old[0]["id"] != new[0]["id"]:
                fields.insert(0, f"its ID ({old[0]['id']} -> {new[0]['id']})")
            found.append(f"{action} {kind} {key} now differs in {', '.join(fields) or 'its body'}")
            continue
        found += [f"{action} {kind} {key}{_id(c)} is no longer needed" for c in old]
        found += [f"{action} {kind} {key}{_id(c)} is new" for c in new]
    return found


def refusal(source: str, found: Sequence[str], *, changed: bool = True) -> ObsError:
    """`changed`: the plan differs now; else the file was made for another place or is too old."""
    more = f"; and {len(found) - _SHOWN} more" if len(found) > _SHOWN else ""
    why = (
        f"the live org or the definitions changed since {source} was planned" if changed else f"{source} does not apply"
    )
    return ObsError.of(
        f"{why}: {'; '.join(found[:_SHOWN])}{more}",
        "nothing was written; make and approve a new plan (obs plan --out FILE)",
    )


def _saved(change: Change) -> dict[str, Any]:
    doc = change_json(change)
    doc["body"] = change.body
    doc["removes"] = change.removes
    doc["duplicate_of"] = change.duplicate_of
    # Round-trip through JSON so a plan made now compares equal to one read back from a file.
    loaded: dict[str, Any] = json.loads(json.dumps(doc, sort_keys=True))
    loaded["digest"] = _digest(loaded)
    return loaded


def _digest(change: Mapping[str, Any]) -> str:
    """What the change does to which object: its action, object, ID, fields, and the body it sends or, for a
    deletion, what the live object holds: a copy edited since the approval is not deleted unseen."""
    content = {k: v for k, v in change.items() if k != "digest"}
    canonical = json.dumps(content, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return "sha256:" + hashlib.sha256(canonical.encode()).hexdigest()


def _grouped(changes: Iterable[Mapping[str, Any]]) -> dict[tuple[str, str, str], list[Mapping[str, Any]]]:
    grouped: dict[tuple[str, str, str], list[Mapping[str, Any]]] = {}
    for change in changes:
        grouped.setdefault((str(change["action"]), str(change["kind"]), str(change["key"])), []).append(change)
    return grouped


def _unmatched(
    old: list[Mapping[str, Any]], new: list[Mapping[str, Any]]
) -> tuple[list[Mapping[str, Any]], list[Mapping[str, Any]]]:
    """Each side less the changes the other side has too, one for one (a multiset difference)."""
    left, right = Counter(c["digest"] for c in old), Counter(c["digest"] for c in new)
    common = left & right
    kept_old, kept_new = Counter(common), Counter(common)
    return _without(old, kept_old), _without(new, kept_new)


def _without(changes: list[Mapping[str, Any]], matched: Counter[str]) -> list[Mapping[str, Any]]:
    rest = []
    for change in changes:
        if matched[change["digest"]] > 0:
            matched[change["digest"]] -= 1
        else:
            rest.append(change)
    return rest


def _id(change: Mapping[str, Any]) -> str:
    return f" (id {change['id']})" if change.get("id") else ""


def _fields(change: Mapping[str, Any]) -> set[tuple[str, str]]:
    """What a change does, path by path: its field changes, and the live fields a deletion removes."""
    removed = change.get("removes") or {}
    return {(str(f["path"]), json.dumps(f, sort_keys=True)) for f in change["fields"]} | {
        (f"removes.{name}", json.dumps(value, sort_keys=True)) for name, value in removed.items()
    }


def _org(org: str | None) -> str:
    return org or "obs could not identify"


def _commit(commit: str | None, dirty: bool) -> str:
    named = f"at commit {commit[:12]}" if commit else "outside a git checkout"
    return f"{named} with uncommitted changes" if dirty else named


def _hours(age: timedelta) -> str:
    return f"{age.total_seconds() / 3600:.1f} h"


_CHANGE = {
    "type": "object",
    "required": ["action", "kind", "key", "id", "fields", "body", "digest"],
    "properties": {
        "action": {"enum": ["create", "update", "delete"]},
        "kind": {"type": "string"},
        "key": {"type": "string"},
        "id": {"type": ["string", "null"]},
        "fields": {
            "type": "array",
            "items": {"type": "object", "required": ["path"], "properties": {"path": {"type": "string"}}},
        },
        "body": {"type": ["object", "null"]},
        "removes": {"type": ["object", "null"]},
        "digest": {"type": "string", "pattern": "^sha256:[0-9a-f]{64}$"},
    },
}
_SCHEMA = {
    "type": "object",
    "required": ["format", "env", "host", "org", "commit", "dirty", "created_at", "changes"],
    "additionalProperties": False,
    "properties": {
        "format": {"const": FORMAT},
        "env": {"type": "string"},
        "host": {"type": "string"},
        "org": {"type": ["string", "null"]},
        "commit": {"type": ["string", "null"]},
        "dirty": {"type": "boolean"},
        "created_at": {"type": "string"},
        "changes": {"type": "array", "items": _CHANGE},
    },
}
_VALIDATOR = jsonschema.Draft202012Validator(_SCHEMA)
