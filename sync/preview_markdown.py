"""Pure: a preview -> one pull-request comment that stays under GitHub's size limit.

Detail collapses step by step, the biggest environment section first: its line diffs, then its field
changes, then its list of resources, then its per-queue breakdown; after that who-gets-paged loses the
monitor names, then rows. Each section states exactly what it left out.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from .paging import AudienceChange
from .plan import UPDATE, Change, Plan
from .preview import WORKING_TREE, Preview
from .preview_report import ACTIONS, audience, by_queue, change_of, counted, line_diff, show, summary

MARKER = "<!-- obs-diff -->"  # the workflow finds its sticky comment by this first line
LIMIT = 65_536  # GitHub's comment limit, in characters
BUDGET = 60_000  # a margin under the limit

# How much of an environment's detail is shown.
FULL, NO_LINE_DIFFS, NO_FIELDS, NO_RESOURCES, NO_QUEUES = range(5)
_MOST = NO_QUEUES


@dataclass(frozen=True)
class _Paging:
    examples: bool = True
    rows: int | None = None  # how many rows to keep; None keeps all


def comment(preview: Preview, rerun: str) -> str:
    """The markdown comment; `rerun` is the command that shows everything, e.g. `obs diff --base X`."""
    plans = {p.env: p for p in preview.plans if p.pending}
    levels = dict.fromkeys(plans, FULL)
    sections = {env: _environment(plan, FULL, rerun) for env, plan in plans.items()}
    out = _compose(preview, sections, _Paging(), rerun)
    while size(out) > BUDGET and any(level < _MOST for level in levels.values()):
        # The biggest section gives up one level of detail: small environments keep theirs longest.
        env = min((e for e in plans if levels[e] < _MOST), key=lambda e: (-size(sections[e]), e))
        levels[env] += 1
        sections[env] = _environment(plans[env], levels[env], rerun)
        out = _compose(preview, sections, _Paging(), rerun)
    for paging in _fewer_rows(len(preview.paging)):
        if size(out) <= BUDGET:
            return out
        out = _compose(preview, sections, paging, rerun)
    return out if size(out) <= BUDGET else _cut(out, rerun)


def _fewer_rows(rows: int) -> Iterator[_Paging]:
    """Who-gets-paged without monitor names, then with half as many rows each time, down to none."""
    yield _Paging(examples=False)
    while rows:
        rows //= 2
        yield _Paging(examples=False, rows=rows)


def size(text: str) -> int:
    """Length as GitHub may count it: UTF-16 code units, never fewer than characters."""
    return len(text.encode("utf-16-le")) // 2


def _compose(preview: Preview, sections: dict[str, str], paging: _Paging, rerun: str) -> str:
    totals = preview.totals()
    head = preview.head if preview.head == WORKING_TREE else _code(preview.head)
    lines = [MARKER, f"## obs diff: {_code(preview.base)} → {head}", ""]
    if preview.pending:
        lines.append(f"{summary(totals)}, across {len(preview.plans)} environment{'s' * (len(preview.plans) != 1)}.")
    else:
        lines.append(f"No monitor or dashboard changes ({totals['unchanged']} unchanged).")
    lines += ["", "| environment | create | update | delete | unchanged |", "|---|---:|---:|---:|---:|"]
    for plan in preview.plans:
        counts = plan.count()
        lines.append(f"| {_code(plan.env)} | {' | '.join(str(counts[a]) for a in ACTIONS)} |")
    if len(preview.plans) > 1:
        lines.append(f"| **total** | {' | '.join(str(totals[a]) for a in ACTIONS)} |")
    lines += ["", *_paging(preview.paging, paging, rerun)]
    lines += [sections[p.env] for p in preview.plans if p.env in sections]
    return "\n".join(lines) + "\n"


def _paging(changes: Sequence[AudienceChange], paging: _Paging, rerun: str) -> list[str]:
    lines = ["### Who gets paged", ""]
    if not changes:
        return [*lines, "No notification target is added, removed or changed.", ""]
    lines += ["| environment | severity | target | monitors |", "|---|---|---|---|"]
    shown = changes if paging.rows is None else changes[: paging.rows]
    for change in shown:
        counts = f"{change.kind} ({change.before} → {change.after} monitors)"
        described = audience(change, "→", "`") if paging.examples else counts
        lines.append(
            f"| {_code(change.env)} | {', '.join(change.severities)} | {_code(change.target)} | {_cell(described)} |"
        )
    left_out = []
    if not paging.examples:
        left_out.append("the names of the monitors behind each change")
    if len(shown) < len(changes):
        left_out.append(f"{len(changes) - len(shown)} more rows")
    if left_out:
        lines += ["", _left_out(left_out, f"{rerun} --format text")]
    return [*lines, ""]


def _environment(plan: Plan, level: int, rerun: str) -> str:
    groups = by_queue(plan)
    lines = [f"### {_code(plan.env)}: {counted(plan.pending)}", ""]
    omitted = _omitted(plan, groups, level)
    if omitted:
        lines += [_left_out(omitted, f"{rerun} --env {plan.env} --format text"), ""]
    if level >= NO_QUEUES:
        return "\n".join(lines)
    for queue, changes in groups:
        if level >= NO_RESOURCES:
            lines.append(f"- {_code(queue)}: {counted(changes)}")
            continue
        lines += [f"<details><summary><code>{html.escape(queue)}</code>: {counted(changes)}</summary>", ""]
        for change in changes:
            lines += _resource(change, level)
        lines += ["", "</details>", ""]
    if level >= NO_RESOURCES:
        lines.append("")
    return "\n".join(lines)


def _resource(change: Change, level: int) -> list[str]:
    fields = f" ({len(change.fields)} field{'s' * (len(change.fields) != 1)})" if level >= NO_FIELDS else ""
    lines = [f"- **{change.action}** {change.kind} {_code(change.key)}{fields}: {_text(change.title)}"]
    if level >= NO_FIELDS:
        return lines
    for field in change.fields:
        lines.append(f"  - {_code(field.path)}: {_cell(change_of(field, '→', _value))}")
        diff = line_diff(field) if level < NO_LINE_DIFFS else []
        if diff:
            fence = "`" * max(3, _longest_run(diff) + 1)
            lines += [f"    {fence}diff", *(f"    {line}" for line in diff), f"    {fence}"]
    return lines


def _omitted(plan: Plan, groups: Sequence[tuple[str, Sequence[Change]]], level: int) -> list[str]:
    """Exactly what this environment's section leaves out at this level."""
    changes = plan.pending
    fields = sum(len(c.fields) for c in changes)
    updated = sum(c.action == UPDATE for c in changes)
    diffs = sum(bool(line_diff(f)) for c in changes for f in c.fields)
    if level == FULL:
        return []
    if level == NO_LINE_DIFFS:
        return [f"the line diffs of {diffs} text fields"] if diffs else []
    out = [f"the {fields} field changes of {updated} updated resources"] if fields else []
    if level >= NO_RESOURCES:
        out.insert(0, f"the list of {len(changes)} changed resources")
    if level >= NO_QUEUES:
        out.insert(0, f"the breakdown by queue ({len(groups)} groups)")
    return out


def _left_out(what: Sequence[str], command: str) -> str:
    return f"> Left out to fit a pull-request comment: {'; '.join(what)}. `{command}` shows everything."


def _cut(out: str, rerun: str) -> str:
    """The last resort, when even the summary is too big (thousands of environments): cut at a line."""
    note = f"\n> Cut here to fit a pull-request comment. `{rerun} --format text` shows everything.\n"
    kept = out[: BUDGET - len(note)]
    return kept[: kept.rfind("\n")] + note


_SPECIAL = re.compile(r"([\\`*_\[\]<>|#~!])")


def _text(value: str) -> str:
    """Plain text that markdown and HTML leave as it is."""
    return _SPECIAL.sub(r"\\\1", value).replace("&", "&amp;")


def _code(value: str) -> str:
    """An inline code span that holds any text, pipes escaped for tables."""
    ticks = "`" * (_longest_run([value]) + 1)
    padded = f" {value} " if value.startswith("`") or value.endswith("`") else value
    return f"{ticks}{padded}{ticks}".replace("|", "\\|")


def _value(value: object) -> str:
    return _code(show(value))


def _cell(value: str) -> str:
    return value.replace("|", "\\|")


def _longest_run(lines: Sequence[str]) -> int:
    return max((len(run) for line in lines for run in re.findall(r"`+", line)), default=0)
