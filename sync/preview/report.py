"""Pure: a preview -> text for people and json for machines, and the wording both share with markdown."""

from __future__ import annotations

import difflib
import json
from collections.abc import Callable, Sequence
from typing import Any

from sync.core import placeholders
from sync.core.paging import AudienceChange
from sync.core.plan import ACTIONS, CREATE, DELETE, UNCHANGED, UPDATE, Change, FieldChange, Plan
from sync.preview.compare import Preview
from sync.report.changes import change_json

SIGNS = {CREATE: "+", UPDATE: "~", DELETE: "-"}
ENVIRONMENT_WIDE = "environment-wide"  # resources of no one queue, such as the on-call dashboard
EXAMPLES = 3  # monitor keys named per audience change; the count says how many more
_MAX_VALUE = 300


def summary(counts: dict[str, int]) -> str:
    return ", ".join(f"{counts[a]} {'unchanged' if a == UNCHANGED else f'to {a}'}" for a in ACTIONS)


def by_queue(plan: Plan) -> list[tuple[str, list[Change]]]:
    """Pending changes grouped by queue, environment-wide ones first."""
    groups: dict[str, list[Change]] = {}
    for change in plan.pending:
        groups.setdefault(change.queue or "", []).append(change)
    return [(queue or ENVIRONMENT_WIDE, changes) for queue, changes in sorted(groups.items())]


def counted(changes: Sequence[Change]) -> str:
    """`2 to create, 1 to update`: only the actions present."""
    return ", ".join(f"{n} to {a}" for a in (CREATE, UPDATE, DELETE) if (n := sum(c.action == a for c in changes)))


def line_diff(field: FieldChange) -> list[str]:
    """A compact unified diff of a multi-line text field (a message), without file headers; [] otherwise."""
    old, new = field.old, field.new
    texts = isinstance(old, str | None) and isinstance(new, str | None)
    if not texts or "\n" not in f"{old or ''}{new or ''}":
        return []
    return list(difflib.unified_diff((old or "").splitlines(), (new or "").splitlines(), lineterm="", n=1))[2:]


def show(value: Any) -> str:
    """A value as JSON, cut short past a few hundred characters (json output has it whole)."""
    shown = json.dumps(value, sort_keys=True, ensure_ascii=False)
    return shown if len(shown) <= _MAX_VALUE else f"{shown[: _MAX_VALUE - 20]}... ({len(shown)} characters)"


def change_of(
    field: FieldChange, arrow: str = "->", value: Callable[[Any], str] = show, lines: Sequence[str] | None = None
) -> str:
    """What happened to one field: `old -> new`, added and removed items of a list, or a line count.
    `lines` is the field's line diff when the caller has it already."""
    old, new = field.old, field.new
    lines = line_diff(field) if lines is None else lines
    if lines:
        added = sum(line.startswith("+") for line in lines)
        removed = sum(line.startswith("-") for line in lines)
        return f"text changed, +{added} -{removed} lines"
    if _scalars(old) and _scalars(new):
        gone = [v for v in old if v not in new]
        came = [v for v in new if v not in old]
        if gone or came:
            parts = ([f"added {', '.join(map(value, came))}"] if came else []) + (
                [f"removed {', '.join(map(value, gone))}"] if gone else []
            )
            return "; ".join(parts)
        return f"reordered: {value(old)} {arrow} {value(new)}"
    return f"{value(old)} {arrow} {value(new)}"


def _scalars(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(v, str | int | float) for v in value)


def audience(change: AudienceChange, arrow: str = "->", name: Callable[[str], str] = str, keys: bool = True) -> str:
    """How a target's monitors changed: `added (0 -> 9 monitors)`, then `; +9: a, b, c and 6 more` with keys."""
    monitors = f"{change.before} {arrow} {change.after} monitor{'s' * (change.after != 1)}"
    parts = [f"{change.kind} ({monitors})"]
    if not keys:
        return parts[0]
    for sign, which in (("+", change.gained), ("-", change.lost)):
        if which:
            named = ", ".join(name(k) for k in which[:EXAMPLES])
            more = f" and {len(which) - EXAMPLES} more" if len(which) > EXAMPLES else ""
            parts.append(f"{sign}{len(which)}: {named}{more}")
    return "; ".join(parts)


def text(preview: Preview) -> str:
    lines = [f"obs diff: {preview.base} -> {preview.head}", ""]
    rows = [["environment", *ACTIONS]] + [[p.env, *(str(p.count()[a]) for a in ACTIONS)] for p in preview.plans]
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    for row in rows:
        lines.append(
            "  ".join([row[0].ljust(widths[0]), *(c.rjust(w) for c, w in zip(row[1:], widths[1:], strict=True))])
        )
    lines.append("")
    if preview.paging:
        lines.append("Who gets paged:")
        for target in preview.paging:
            lines.append(f"  {target.env} {'/'.join(target.severities)}: {target.target} {audience(target)}")
    else:
        lines.append("Who gets paged: no notification target added, removed or changed.")
    for plan in preview.plans:
        for queue, changes in by_queue(plan):
            lines += ["", f"{plan.env} / {queue}: {counted(changes)}"]
            for change in changes:
                lines.append(f"  {SIGNS[change.action]} {change.kind} {change.key}  {change.title}")
                if change.note:
                    lines.append(f"      ({change.note})")
                for field in change.fields:
                    lines.append(f"      {field.path}: {change_of(field)}")
                    lines += [f"        {line}" for line in line_diff(field)]
    if any(plan.awaiting for plan in preview.plans):
        lines += ["", f"Note: {placeholders.PLACEHOLDER_NOTE}"]
    lines += ["", f"Diff: {summary(preview.totals())}."]
    return "\n".join(lines) + "\n"


def as_json(preview: Preview) -> str:
    doc = {
        "base": preview.base,
        "head": preview.head,
        "pending": preview.pending,
        "summary": preview.totals(),
        "environments": [
            {"env": plan.env, "summary": _counts(plan), "changes": [_change_json(c) for c in plan.pending]}
            for plan in preview.plans
        ],
        "paging": [
            {
                "env": c.env,
                "severities": list(c.severities),
                "target": c.target,
                "change": c.kind,
                "before": c.before,
                "after": c.after,
                "gained": list(c.gained),
                "lost": list(c.lost),
            }
            for c in preview.paging
        ],
    }
    return json.dumps(doc, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def _counts(plan: Plan) -> dict[str, int]:
    counts = plan.count()
    return {action: counts[action] for action in ACTIONS}


def _change_json(change: Change) -> dict[str, Any]:
    """The plan's form of a change, without the ID a diff of two revisions does not have."""
    found = change_json(change)
    del found["id"]
    return found
