"""Pure: a preview -> text for people and json for machines, and the wording both share with markdown."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

from sync.core import placeholders
from sync.core.conditions import ConditionChange
from sync.core.diff import FieldChange
from sync.core.paging import AudienceChange, severity_order
from sync.core.plan import Action, Change, Plan
from sync.preview.compare import ACTION_ORDER, Preview
from sync.preview.groups import SameChange
from sync.report import vocabulary
from sync.report.audience import line_diff, silence_lines
from sync.report.changes import change_json
from sync.report.corrections import correction_lines

ENVIRONMENT_WIDE = "environment-wide"  # resources of no one queue, such as the on-call dashboard
SUMMARY_TARGETS = 5  # targets named per summary row; the count says how many more
EXAMPLES = 3  # monitor keys named per audience change; the count says how many more
_MAX_VALUE = 300


def named(label: str, commit: str) -> str:
    """A revision as the header names it: `main (1a2b3c4d5e6f)`, or the short commit alone if that is its name."""
    short = commit[:12]
    if not short or label.startswith(short) or short.startswith(label):
        return short or label
    return f"{label} ({short})"


def paging_summary(
    preview: Preview, name: Callable[[str], str] = str, arrow: str = "->", limit: int = SUMMARY_TARGETS
) -> list[tuple[str, str, str]]:
    """(environment, severity, what changed) for every severity whose audience changed, and one row per
    environment whose paging monitors changed when they page: small enough to show whole, at any scale."""
    rows: dict[tuple[str, str], dict[str, list[str]]] = {}
    for change in preview.paging:
        for severity in change.severities:
            kinds = rows.setdefault((change.env, severity), {})
            kinds.setdefault(change.kind, []).append(f"{name(change.target)} ({change.before} {arrow} {change.after})")
    out = []
    for (env, severity), kinds in rows.items():
        parts = []
        for kind in ("added", "removed", "changed"):
            targets = kinds.get(kind, [])
            if targets:
                more = f" and {len(targets) - limit} more" if len(targets) > limit else ""
                parts.append(f"{kind} {', '.join(targets[:limit])}{more}")
        out.append((env, severity, "; ".join(parts)))
    moved: dict[str, int] = {}
    for condition in preview.conditions:
        moved[condition.env] = moved.get(condition.env, 0) + len(condition.keys)
    out += [
        (
            env,
            "alert condition",
            f"{count:,} paging monitor{'s' * (count != 1)} page{'s' * (count == 1)} at another point",
        )
        for env, count in moved.items()
    ]
    order = {plan.env: index for index, plan in enumerate(preview.plans)}
    return sorted(out, key=lambda row: (order.get(row[0], 0), severity_order(row[1])))


def summary(counts: dict[str, int]) -> str:
    return vocabulary.summary(counts)


def by_queue(plan: Plan) -> list[tuple[str, list[Change]]]:
    """Pending changes grouped by queue, environment-wide ones first; updates, then deletes, then creates."""
    groups: dict[str, list[Change]] = {}
    for change in sorted(plan.pending, key=lambda c: ACTION_ORDER.index(c.action)):
        groups.setdefault(change.queue or "", []).append(change)
    return [(queue or ENVIRONMENT_WIDE, changes) for queue, changes in sorted(groups.items())]


def counted(changes: Sequence[Change]) -> str:
    """`2 to create, 1 to update`: only the actions present."""
    return vocabulary.counted(c.action for c in changes)


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


def condition_line(change: ConditionChange, quote: str = "", arrow: str = "->") -> str:
    """`12 monitors paging @pagerduty-x: pages after 4 h -> after 2 h of waiting (a, b, c and 9 more)`."""
    count = len(change.keys)
    who = ", ".join(f"{quote}{t}{quote}" for t in change.targets) or "nobody now"
    keys = ", ".join(f"{quote}{k}{quote}" for k in change.keys[:EXAMPLES])
    more = f" and {count - EXAMPLES} more" if count > EXAMPLES else ""
    return f"{count:,} monitor{'s' * (count != 1)} paging {who}: {change.before} {arrow} {change.after} ({keys}{more})"


def same_line(
    group: SameChange, value: Callable[[Any], str] = show, arrow: str = "->", path: Callable[[str], str] = str
) -> str:
    """`options.thresholds.critical 10000 -> 20000 on 1,000 monitors (prod, staging, dev)`."""
    what = change_of(group.field, arrow, value)
    kind = group.kind.name if group.count == 1 else group.kind.plural
    return f"{path(group.field.path)} {what} on {group.count:,} {kind} ({', '.join(group.envs)})"


def text(preview: Preview, *, colour: bool = False) -> str:
    base, head = named(preview.base, preview.base_commit), named(preview.head, preview.head_commit)
    lines = [f"obs diff: {base} -> {head}", ""]
    for notice in preview.notices:
        said = f"WARNING: {notice.text}" if notice.env == "" else f"WARNING ({notice.env}): {notice.text}"
        lines.append(vocabulary.painted(said, vocabulary.YELLOW, colour))
    lines += [""] if preview.notices else []
    lines += _counts_table(preview)
    lines.append("")
    lines += _paging_lines(preview)
    silences = silenced(preview)
    if silences:
        lines += ["", "Who stops being paged, and when (maintenance windows):"]
        lines += [f"  {env}: {line}" for env, line in silences]
    if preview.conditions:
        lines += ["", "When they get paged:"]
        lines += [f"  {c.env}: {condition_line(c)}" for c in preview.conditions]
    if preview.same:
        lines += ["", "The same change on many resources:"]
        lines += [f"  {same_line(g)}" for g in preview.same]
    lines += _change_lines(preview, colour)
    if any(plan.awaiting for plan in preview.plans):
        lines += ["", f"Note: {placeholders.PLACEHOLDER_NOTE}"]
    lines += ["", f"Diff: {summary(preview.totals())}."]
    return "\n".join(lines) + "\n"


def _counts_table(preview: Preview) -> list[str]:
    """Per environment, how many resources each action touches, in aligned columns."""
    rows = [["environment", *Action]] + [[p.env, *(str(p.count()[a]) for a in Action)] for p in preview.plans]
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return [
        "  ".join([row[0].ljust(widths[0]), *(c.rjust(w) for c, w in zip(row[1:], widths[1:], strict=True))])
        for row in rows
    ]


def _paging_lines(preview: Preview) -> list[str]:
    """Who gets paged: in short per environment and severity, then each notification target that changed."""
    lines = []
    summary_rows = paging_summary(preview)
    if summary_rows:
        lines.append("Who gets paged, in short:")
        lines += [f"  {env} {severity}: {what}" for env, severity, what in summary_rows]
        lines.append("")
    if preview.paging:
        lines.append("Who gets paged:")
        for target in preview.paging:
            lines.append(f"  {target.env} {'/'.join(target.severities)}: {target.target} {audience(target)}")
    else:
        lines.append("Who gets paged: no notification target added, removed or changed.")
    return lines


def _change_lines(preview: Preview, colour: bool) -> list[str]:
    """Each change, per environment and queue, with the fields it changes."""
    lines = []
    for plan in preview.plans:
        for queue, changes in by_queue(plan):
            lines += ["", f"{plan.env} / {queue}: {counted(changes)}"]
            for change in changes:
                head = f"  {vocabulary.SIGNS[change.action]} {change.kind} {change.key}  {change.title}"
                lines.append(vocabulary.painted(head, vocabulary.COLOURS.get(change.action), colour))
                if change.note:
                    lines.append(f"      ({change.note})")
                for field in change.fields:
                    lines.append(f"      {field.path}: {change_of(field)}")
                    lines += [f"        {line}" for line in line_diff(field)]
    return lines


def silenced(preview: Preview) -> list[tuple[str, str]]:
    """Per environment, the monitors that maintenance windows added, moved or removed silence, and when, and
    the SLOs they correct."""
    return [(plan.env, line) for plan in preview.plans for line in [*silence_lines(plan), *correction_lines(plan)]]


def as_json(preview: Preview, backtest: list[dict[str, Any]] | None = None) -> str:
    """`backtest`: what `obs diff --backtest` found, per environment, when it was asked for."""
    doc: dict[str, Any] = {
        "base": preview.base,
        "head": preview.head,
        "base_commit": preview.base_commit,
        "head_commit": preview.head_commit,
        "warnings": [{"kind": n.kind, "env": n.env or None, "text": n.text} for n in preview.notices],
        "silenced": [{"env": env, "text": line} for env, line in silenced(preview)],
        "paging_conditions": [
            {"env": c.env, "targets": list(c.targets), "before": c.before, "after": c.after, "monitors": list(c.keys)}
            for c in preview.conditions
        ],
        "same_changes": [
            {
                "path": g.field.path,
                "old": g.field.old,
                "new": g.field.new,
                "kind": g.kind.name,
                "count": g.count,
                "envs": list(g.envs),
            }
            for g in preview.same
        ],
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
    if backtest is not None:
        doc["backtest"] = backtest
    return json.dumps(doc, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def _counts(plan: Plan) -> dict[str, int]:
    counts = plan.count()
    return {action: counts[action] for action in Action}


def _change_json(change: Change) -> dict[str, Any]:
    """The plan's form of a change, without the ID a diff of two revisions does not have."""
    found = change_json(change)
    del found["id"]
    return found
