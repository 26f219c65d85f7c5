"""Pure: a plan as a file that people approve, and what differs when the sync plans again.

`obs plan --out FILE` writes the pending changes exactly: each action, object, ID, field change and body
to write. `obs sync --plan FILE` plans again against the live org and applies only if it gets the same
changes; a difference that matters (someone edited a monitor since, a dashboard got a new ID, the
definitions are another commit's) refuses the sync instead of applying something nobody approved.
Live edits to fields obs does not own change no plan, so they do not block it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from sync.core.plan import Change, Plan
from sync.errors import ObsError
from sync.report.changes import change_json

FORMAT = "obs-plan/1"
_SHOWN = 5  # differences named in the refusal; the count says how many more


def dump(plan: Plan) -> str:
    doc = {"format": FORMAT, "env": plan.env, "changes": [_saved(c) for c in plan.pending]}
    return json.dumps(doc, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def load(text: str, source: str) -> Mapping[str, Any]:
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ObsError.of(f"{source} is not a plan file: {exc}", "write one with obs plan --out FILE") from None
    if not isinstance(doc, dict) or doc.get("format") != FORMAT or not isinstance(doc.get("changes"), list):
        raise ObsError.of(f"{source} is not a plan file of this obs ({FORMAT})", "write it again with obs plan --out")
    return doc


def differences(saved: Mapping[str, Any], plan: Plan) -> list[str]:
    """What the plan made now does differently from the approved one; [] when it is the same plan."""
    if saved.get("env") != plan.env:
        return [f"the plan file is for {saved.get('env')!r}, not {plan.env!r}"]
    was = {_at(c): c for c in saved["changes"]}
    now = {_at(c): c for c in (_saved(c) for c in plan.pending)}
    found = []
    for at in sorted(was.keys() | now.keys()):
        action, kind, key = at
        if at not in now:
            found.append(f"{action} {kind} {key} is no longer needed")
        elif at not in was:
            found.append(f"{action} {kind} {key} is new")
        elif was[at] != now[at]:
            fields = sorted({path for path, _ in _fields(was[at]) ^ _fields(now[at])}) or ["its ID or body"]
            found.append(f"{action} {kind} {key} now differs in {', '.join(fields)}")
    return found


def refusal(source: str, found: Sequence[str]) -> ObsError:
    more = f"; and {len(found) - _SHOWN} more" if len(found) > _SHOWN else ""
    return ObsError.of(
        f"the live org or the definitions changed since {source} was planned: {'; '.join(found[:_SHOWN])}{more}",
        "nothing was written; make and approve a new plan (obs plan --out FILE)",
    )


def _saved(change: Change) -> dict[str, Any]:
    doc = change_json(change)
    doc["body"] = change.body
    doc["duplicate_of"] = change.duplicate_of
    # Round-trip through JSON so a plan made now compares equal to one read back from a file.
    loaded: dict[str, Any] = json.loads(json.dumps(doc, sort_keys=True))
    return loaded


def _at(change: Mapping[str, Any]) -> tuple[str, str, str]:
    return str(change["action"]), str(change["kind"]), str(change["key"])


def _fields(change: Mapping[str, Any]) -> set[tuple[str, str]]:
    return {(str(f["path"]), json.dumps(f, sort_keys=True)) for f in change["fields"]}
