"""Pure: a plan -> text for people, markdown for pull requests, json for machines."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from typing import Any

from sync.core import placeholders
from sync.core.diff import FieldChange
from sync.core.outcome import Outcome
from sync.core.plan import Action, Change, Plan
from sync.report import markdown as md
from sync.report import vocabulary
from sync.report.audience import line_diff, paging_lines

_MAX_VALUE = 200
_SAME_ERROR_SHOWN = 3


def summary(plan: Plan) -> str:
    return vocabulary.summary(plan.count(), unmanaged=True)


def text(plan: Plan, *, against: str, colour: bool = False) -> str:
    lines = [f"Plan for {plan.env} against {against}:"]
    for change in plan.pending:
        head = f"{vocabulary.SIGNS[change.action]} {change.kind} {change.key}"
        if change.id:
            head += f" (id {change.id})"
        head += f"  {change.title}"
        lines.append(vocabulary.painted(head, vocabulary.COLOURS.get(change.action), colour))
        if change.note:
            lines.append(f"    ({change.note})")
        for field in change.fields:
            diff = line_diff(field)
            if diff:  # a message reads as the lines it changes, as in obs diff
                lines.append(f"    {field.path}: text changed, +{_signed(diff, '+')} -{_signed(diff, '-')} lines")
                lines += [f"      {line}" for line in diff]
            else:
                old, new = _shown(field)
                lines.append(f"    {field.path}: {old} -> {new}")
    for obj in plan.unmanaged:
        left = "not managed by obs, left alone (--adopt takes it over)"
        lines.append(f"{vocabulary.UNMANAGED} {obj.kind} {obj.id}  {obj.kind.title(obj.body)}: {left}")
    paging = paging_lines(plan)
    if paging:
        lines += ["Who gets paged:", *(f"  {line}" for line in paging)]
    if plan.awaiting:
        lines.append(f"Note: {placeholders.PLACEHOLDER_NOTE}")
    lines.append(f"Plan: {summary(plan)}.")
    return "\n".join(lines) + "\n"


def markdown(plan: Plan, *, against: str) -> str:
    c = plan.count()
    lines = [
        f"### obs plan: {md.code(plan.env)} against {md.text(against)}",
        "",
        "| create | update | delete | unchanged | unmanaged |",
        "|---:|---:|---:|---:|---:|",
        f"| {c[Action.CREATE]} | {c[Action.UPDATE]} | {c[Action.DELETE]} | {c[Action.UNCHANGED]} | {c['unmanaged']} |",
        "",
    ]
    for change in plan.pending:
        note = f" ({md.text(change.note)})" if change.note else ""
        lines.append(f"- **{change.action}** {change.kind} {md.code(change.key)} {md.text(change.title)}{note}")
        for f in change.fields:
            diff = line_diff(f)
            if diff:
                counts = f"+{_signed(diff, '+')} -{_signed(diff, '-')} lines"
                lines.append(f"  - {md.code(f.path)}: text changed, {counts}")
                lines += [f"    {line}" for line in md.fence(diff, "diff")]
                continue
            old, new = _shown(f)
            lines.append(f"  - {md.code(f.path)}: {md.code(old)} → {md.code(new)}")
    paging = paging_lines(plan)
    if paging:
        lines += ["", "**Who gets paged**", ""]
        lines += [f"- {md.text(line)}" for line in paging]
    if plan.awaiting:
        lines += ["", f"> {placeholders.PLACEHOLDER_NOTE}"]
    return "\n".join(lines) + "\n"


def as_json(plan: Plan, *, against: str) -> str:
    doc = {
        "env": plan.env,
        "against": against,
        "summary": plan.count(),
        "changes": [change_json(c) for c in plan.changes],
        "unmanaged": [{"kind": o.kind.name, "id": o.id, "title": o.kind.title(o.body)} for o in plan.unmanaged],
        "awaiting_dashboard_ids": plan.awaiting,
    }
    return json.dumps(doc, indent=2, sort_keys=True) + "\n"


def change_json(change: Change) -> dict[str, Any]:
    return {
        "action": change.action,
        "kind": change.kind.name,
        "key": change.key,
        "id": change.id,
        "title": change.title,
        "queue": change.queue,
        "note": change.note,
        "replace": change.replace,
        "fields": [_field_json(f) for f in change.fields],
    }


def _signed(diff: Sequence[str], sign: str) -> int:
    return sum(line.startswith(sign) for line in diff)


def _field_json(f: FieldChange) -> dict[str, Any]:
    return {"path": f.path, "old": f.old, "new": f.new}


def _shown(change: FieldChange) -> tuple[str, str]:
    """Both values as JSON, long ones cut to a window that starts just before where they differ."""
    old, new = (_json(v) for v in (change.old, change.new))
    if max(len(old), len(new)) <= _MAX_VALUE:
        return old, new
    start = next((i for i, (a, b) in enumerate(zip(old, new, strict=False)) if a != b), min(len(old), len(new)))
    start = max(0, start - _MAX_VALUE // 4)
    return _window(old, start), _window(new, start)


def _json(value: Any) -> str:
    if isinstance(value, float) and value.is_integer():
        value = int(value)  # the server's 30.0 is the 30 we sent: show them alike
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


def _window(text: str, start: int) -> str:
    head = "..." if start else ""
    tail = "..." if len(text) > start + _MAX_VALUE else ""
    return head + text[start : start + _MAX_VALUE] + tail


def outcomes(results: Sequence[Outcome], *, dry_run: bool, seconds: float, unchecked: int = 0) -> str:
    """What a sync did (or, for a dry run, what the API said of each monitor), failures first."""
    failed = [o for o in results if not o.ok]
    lines: list[str] = []
    by_error: dict[str, list[Outcome]] = {}
    for o in failed:
        by_error.setdefault(o.error, []).append(o)
    for error, group in by_error.items():
        # One refusal for all (a key without write permission) is said a few times, not once a monitor.
        lines += [f"{_failure(o)}: {_what(o)}: {error}" for o in group[:_SAME_ERROR_SHOWN]]
        if len(group) > _SAME_ERROR_SHOWN:
            lines.append(f"{_failure(group[0])}: {len(group) - _SAME_ERROR_SHOWN} more with the same error")
    lines += [f"note: {_what(o)}: {o.note}" for o in results if o.ok and o.note]
    if dry_run:
        lines.append(
            f"Dry run: {vocabulary.many(len(results) - len(failed), 'monitor')} valid, {len(failed)} invalid, "
            "by the API's validate endpoint (dashboards and deletions are not checked); nothing written."
        )
        if unchecked:
            lines.append(
                f"Not checked: {vocabulary.many(unchecked, 'monitor')} whose query names an SLO the sync creates "
                "first (its ID does not exist yet); the model check of obs validate covered them."
            )
        return "\n".join(lines) + "\n"
    done = Counter(o.change.action for o in results if o.ok)
    uncertain = sum(o.doubtful for o in failed)
    unsure = f" ({uncertain} uncertain: they may have been made; the next plan shows)" if uncertain else ""
    lines.append(f"Applied: {vocabulary.applied(done)}, {len(failed)} failed{unsure} in {seconds:.1f} s.")
    return "\n".join(lines) + "\n"


def _failure(o: Outcome) -> str:
    """A failed write whose answer was lost and that could not be checked afterwards may have happened."""
    return "uncertain" if o.doubtful else "failed"


def _what(o: Outcome) -> str:
    ident = f" (id {o.change.id})" if o.change.id else ""
    return f"{o.change.action} {o.change.kind} {o.change.key}{ident}"


def render(plan: Plan, fmt: str, *, against: str, colour: bool = False) -> str:
    if fmt == "text":
        return text(plan, against=against, colour=colour)
    return {"json": as_json, "markdown": markdown}[fmt](plan, against=against)
