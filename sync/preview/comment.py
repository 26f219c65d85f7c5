"""Pure: a preview -> one pull-request comment that stays under GitHub's size limit.

Detail collapses step by step, the biggest queue's first: its line diffs, then its field changes, then
its list of resources; then environments drop their per-queue lines; after that who-gets-paged loses
the monitor names, then rows. Each section states exactly what it left out.
"""

from __future__ import annotations

import heapq
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

from sync.core import placeholders
from sync.core.paging import AudienceChange
from sync.core.plan import Action, Change, Plan
from sync.preview.compare import WORKING_TREE, Preview
from sync.preview.report import (
    audience,
    by_queue,
    change_of,
    condition_line,
    counted,
    named,
    paging_summary,
    same_line,
    show,
    silenced,
    summary,
)
from sync.report import markdown as md
from sync.report.audience import line_diff

MARKER = "<!-- obs-diff -->"  # the workflow finds its sticky comment by this first line
LIMIT = 65_536  # GitHub's comment limit, in characters
BUDGET = 60_000  # a margin under the limit
NOTICES = 20  # warnings shown in full; more are counted
GROUPS = 30  # grouped lines shown per list; more are counted

# How much of a queue's changes is shown; an environment can drop its per-queue breakdown altogether.
FULL, NO_LINE_DIFFS, NO_FIELDS, NO_RESOURCES = range(4)


@dataclass(frozen=True)
class _Paging:
    examples: bool = True
    rows: int | None = None  # how many rows to keep; None keeps all


@dataclass
class _Group:
    """One queue's changes in one environment, and their markdown at the level of detail it is shown at."""

    queue: str
    changes: Sequence[Change]
    diffs: list[list[list[str]]]  # the line diff of each field of each change ([] for most)
    level: int = FULL
    text: str = ""

    def render(self) -> int:
        self.text = _group(self)
        return size(self.text)


@dataclass
class _Section:
    """One environment: its heading, what it leaves out, and its queues."""

    plan: Plan
    groups: list[_Group]
    title: str
    hidden: Counter[str] = field(default_factory=Counter)  # what the section leaves out, by kind
    collapsed: bool = False  # no per-queue breakdown at all
    heading: str = ""

    def render(self, rerun: str) -> int:
        self.heading = _heading(self, rerun)
        return size(self.heading)

    def lower(self, group: _Group) -> None:
        """Show one queue with one level less detail, and count what that leaves out."""
        group.level += 1
        if group.level == NO_LINE_DIFFS:
            self.hidden["diffs"] += sum(bool(d) for fields in group.diffs for d in fields)
        elif group.level == NO_FIELDS:
            self.hidden["diffs"] -= sum(bool(d) for fields in group.diffs for d in fields)
            self.hidden["fields"] += sum(len(c.fields) for c in group.changes)
            self.hidden["updated"] += sum(c.action == Action.UPDATE and bool(c.fields) for c in group.changes)
        else:
            self.hidden["resources"] += len(group.changes)
            self.hidden["queues"] += 1


def comment(preview: Preview, rerun: str, extra: str = "") -> str:
    """The markdown comment; `rerun` is the command that shows everything, e.g. `obs diff --base X`. `extra`
    (what the backtest found) follows the header, never cut: the rest fits beside it."""
    budget = BUDGET - size(extra)
    sections = [_new_section(plan) for plan in preview.plans if plan.pending]
    # Who gets paged matters most, but thousands of rows would leave no room for anything else.
    paging = next(p for p in _fewer_rows(preview.paging) if size(_paging(preview.paging, p, rerun)) <= budget // 2)
    total = (
        size(_header(preview))
        + size(extra)
        + size(_grouped(preview, rerun))
        + size(_paging(preview.paging, paging, rerun))
    )
    total += sum(s.render(rerun) + sum(g.render() for g in s.groups) for s in sections)
    # The biggest queue gives up one level of detail at a time, so small changes keep theirs longest;
    # among equals the later queues go first.
    order = [(s, g) for s in sections for g in s.groups]
    biggest = [(-size(g.text), -index) for index, (_, g) in enumerate(order)]
    heapq.heapify(biggest)
    while total > budget and biggest:
        _, later = heapq.heappop(biggest)
        section, group = order[-later]
        total -= size(section.heading) + size(group.text)
        section.lower(group)
        total += section.render(rerun) + group.render()
        if group.level < NO_RESOURCES:
            heapq.heappush(biggest, (-size(group.text), later))
    # Thousands of queues: environments drop their per-queue lines, the biggest first.
    for section in sorted(sections, key=lambda s: -sum(size(g.text) for g in s.groups)):
        if total <= budget:
            break
        total -= size(section.heading) + sum(size(g.text) for g in section.groups)
        section.collapsed = True
        total += section.render(rerun)
    # The sections were fitted beside at most half a budget of who-gets-paged: it gets back what they left.
    for richest in _fewer_rows(preview.paging):
        out = _compose(preview, sections, richest, rerun, extra)
        if size(out) <= BUDGET:
            return out
    return _cut(out, rerun)


def _new_section(plan: Plan) -> _Section:
    groups = [_Group(q, c, [[line_diff(f) for f in ch.fields] for ch in c]) for q, c in by_queue(plan)]
    return _Section(plan, groups, f"### {md.code(plan.env)}: {counted(plan.pending)}")


def _fewer_rows(changes: Sequence[AudienceChange]) -> Iterator[_Paging]:
    """Who-gets-paged as it is, without monitor names, then with half as many rows each time, down to none."""
    yield _Paging()
    yield _Paging(examples=False)
    rows = len(changes)
    while rows:
        rows //= 2
        yield _Paging(examples=False, rows=rows)


def size(text: str) -> int:
    """Length as GitHub may count it: UTF-16 code units, never fewer than characters."""
    return len(text.encode("utf-16-le")) // 2


def _compose(preview: Preview, sections: Sequence[_Section], paging: _Paging, rerun: str, extra: str) -> str:
    parts = [_header(preview), extra, _grouped(preview, rerun), _paging(preview.paging, paging, rerun)]
    for section in sections:
        parts.append(section.heading)
        if not section.collapsed:
            parts += [g.text for g in section.groups]
    return "".join(parts)


def _header(preview: Preview) -> str:
    """Never cut: what is compared, what a reviewer must know, the counts, and who gets paged in short."""
    totals = preview.totals()
    base, head = _revision(preview.base, preview.base_commit), _revision(preview.head, preview.head_commit)
    if preview.head == WORKING_TREE:  # uncommitted edits are part of it: the commit is where they start from
        head = f"working tree (on {md.code(preview.head_commit[:12])})" if preview.head_commit else WORKING_TREE
    lines = [MARKER, f"## obs diff: {base} → {head}", ""]
    shown = preview.notices[:NOTICES]
    for notice in shown:
        where = f"**{md.text(notice.env)}**: " if notice.env else ""
        lines += ["> [!WARNING]", f"> {where}{md.text(notice.text)}", ""]
    if len(preview.notices) > len(shown):
        lines += [f"> [!WARNING]\n> {len(preview.notices) - len(shown)} more warnings: `--format text` shows them.", ""]
    if preview.pending:
        lines.append(f"{summary(totals)}, across {len(preview.plans)} environment{'s' * (len(preview.plans) != 1)}.")
    else:
        lines.append(f"No monitor or dashboard changes ({totals['unchanged']} unchanged).")
    lines += ["", "| environment | create | update | delete | unchanged |", "|---|---:|---:|---:|---:|"]
    for plan in preview.plans:
        counts = plan.count()
        lines.append(f"| {md.cell(md.code(plan.env))} | {' | '.join(str(counts[a]) for a in Action)} |")
    if len(preview.plans) > 1:
        lines.append(f"| **total** | {' | '.join(str(totals[a]) for a in Action)} |")
    if any(plan.awaiting for plan in preview.plans):
        lines += ["", f"> {placeholders.PLACEHOLDER_NOTE}"]
    rows = paging_summary(preview, md.code, "→")  # targets are the only outside text: code spans hold them
    if rows:
        lines += ["", "### Who gets paged, in short", "", "| environment | severity | change |", "|---|---|---|"]
        for env, severity, what in rows:
            lines.append(f"| {md.cell(md.code(env))} | {md.cell(md.text(severity))} | {md.cell(what)} |")
    return "\n".join(lines) + "\n\n"


def _revision(label: str, commit: str) -> str:
    """`main` (`1a2b3c4d5e6f`), or the commit alone when that is what the user named."""
    whole = named(label, commit)
    return md.code(whole) if whole == label or whole == commit[:12] else f"{md.code(label)} ({md.code(commit[:12])})"


def _grouped(preview: Preview, rerun: str) -> str:
    """The same change on many resources, and paging monitors that page at another point, each said once."""
    lines: list[str] = []
    if preview.same:
        lines += ["### The same change on many resources", ""]
        lines += [f"- {same_line(g, _value, '→', md.code)}" for g in preview.same[:GROUPS]]
        if len(preview.same) > GROUPS:
            lines += ["", _left_out([_count(len(preview.same) - GROUPS, "more group")], f"{rerun} --format text")]
        lines.append("")
    silences = silenced(preview)
    if silences:
        lines += ["### Who stops being paged, and when (maintenance windows)", ""]
        lines += [f"- {md.code(env)}: {md.text(line)}" for env, line in silences[:GROUPS]]
        if len(silences) > GROUPS:
            lines += ["", _left_out([_count(len(silences) - GROUPS, "more window")], f"{rerun} --format text")]
        lines.append("")
    if preview.conditions:
        lines += ["### When they get paged", ""]
        shown = preview.conditions[:GROUPS]
        lines += [f"- {md.code(c.env)}: {md.text(condition_line(c, arrow='→'))}" for c in shown]
        if len(preview.conditions) > GROUPS:
            more = [_count(len(preview.conditions) - GROUPS, "more group")]
            lines += ["", _left_out(more, f"{rerun} --format text")]
        lines.append("")
    return "\n".join(lines) + "\n" if lines else ""


def _paging(changes: Sequence[AudienceChange], paging: _Paging, rerun: str) -> str:
    lines = ["### Who gets paged", ""]
    if not changes:
        return "\n".join([*lines, "No notification target is added, removed or changed."]) + "\n\n"
    lines += ["| environment | severity | target | monitors |", "|---|---|---|---|"]
    shown = changes if paging.rows is None else changes[: paging.rows]
    for change in shown:
        described = audience(change, "→", md.code, keys=paging.examples)
        cells = (md.code(change.env), ", ".join(change.severities), md.code(change.target), described)
        lines.append(f"| {' | '.join(map(md.cell, cells))} |")
    left_out = []
    if not paging.examples:
        left_out.append("the names of the monitors behind each change")
    if len(shown) < len(changes):
        left_out.append(f"{_count(len(changes) - len(shown), 'more row')}")
    if left_out:
        lines += ["", _left_out(left_out, f"{rerun} --format text")]
    return "\n".join(lines) + "\n\n"


def _heading(section: _Section, rerun: str) -> str:
    lines = [section.title, ""]
    omitted = _omitted(section)
    if omitted:
        lines += [_left_out(omitted, f"{rerun} --env {section.plan.env} --format text"), ""]
    return "\n".join(lines) + "\n"


def _omitted(section: _Section) -> list[str]:
    """Exactly what this environment's section leaves out."""
    hidden = section.hidden
    if section.collapsed:
        changes = section.plan.pending
        hidden = Counter(
            queues=len(section.groups),
            resources=len(changes),
            fields=sum(len(c.fields) for c in changes),
            updated=sum(c.action == Action.UPDATE and bool(c.fields) for c in changes),
        )
    out = [f"the breakdown by queue ({_count(len(section.groups), 'group')})"] if section.collapsed else []
    if hidden["resources"]:
        resources, queues = _count(hidden["resources"], "changed resource"), _count(hidden["queues"], "queue")
        out.append(f"the list of {resources} in {queues}")
    if hidden["fields"]:
        out.append(f"the {_count(hidden['fields'], 'field change')} of {_count(hidden['updated'], 'updated resource')}")
    if hidden["diffs"]:
        out.append(f"the line diffs of {_count(hidden['diffs'], 'text field')}")
    return out


def _count(number: int, noun: str) -> str:
    return f"{number} {noun}{'s' * (number != 1)}"


def _group(group: _Group) -> str:
    if group.level >= NO_RESOURCES:
        return f"- {md.code(group.queue)}: {counted(group.changes)}\n\n"
    lines = [f"<details><summary>{md.html_code(group.queue)}: {counted(group.changes)}</summary>", ""]
    for change, diffs in zip(group.changes, group.diffs, strict=True):
        lines += _resource(change, diffs, group.level)
    return "\n".join([*lines, "", "</details>"]) + "\n\n"


def _resource(change: Change, diffs: Sequence[Sequence[str]], level: int) -> list[str]:
    fields = f" ({_count(len(change.fields), 'field')})" if level >= NO_FIELDS and change.fields else ""
    note = f" ({md.text(change.note)})" if change.note else ""
    lines = [f"- **{change.action}** {change.kind} {md.code(change.key)}{fields}: {md.text(change.title)}{note}"]
    if level >= NO_FIELDS:
        return lines
    for field_change, diff in zip(change.fields, diffs, strict=True):
        lines.append(f"  - {md.code(field_change.path)}: {change_of(field_change, '→', _value, diff)}")
        if diff and level < NO_LINE_DIFFS:
            lines += [f"    {line}" for line in md.fence(diff, "diff")]
    return lines


def _left_out(what: Sequence[str], command: str) -> str:
    return f"> Left out to fit a pull-request comment: {'; '.join(what)}. {md.code(command)} shows everything."


def _cut(out: str, rerun: str) -> str:
    """The last resort, when even the summary is too big (thousands of environments): cut at a line."""
    note = f"\n> Cut here to fit a pull-request comment. {md.code(f'{rerun} --format text')} shows everything.\n"
    kept = out.encode("utf-16-le")[: 2 * (BUDGET - size(note))].decode("utf-16-le", errors="ignore")
    return kept[: kept.rfind("\n")] + note


def _value(value: object) -> str:
    return md.code(show(value))
