"""Pure: what a plan changes in who gets paged, and a text field's change as a line diff; `obs plan` and
`obs diff` read alike."""

from __future__ import annotations

import difflib
from collections import Counter

from sync.core.diff import FieldChange
from sync.core.downtimes import schedule_words, selects
from sync.core.keys import Key
from sync.core.kinds import DOWNTIME
from sync.core.paging import routes, severity_order
from sync.core.plan import Action, Change, Plan
from sync.report.corrections import correction_lines


def line_diff(field: FieldChange) -> list[str]:
    """A compact unified diff of a multi-line text field (a message), without file headers; [] otherwise."""
    old, new = field.old, field.new
    texts = isinstance(old, str | None) and isinstance(new, str | None)
    if not texts or "\n" not in f"{old or ''}{new or ''}":
        return []
    return list(difflib.unified_diff((old or "").splitlines(), (new or "").splitlines(), lineterm="", n=1))[2:]


def paging_lines(plan: Plan) -> list[str]:
    """Per severity, the targets the plan's writes add to or remove from monitors: `alert: +@a on 3
    monitors, -@b on 3 monitors`; deleted monitors are counted, their audience is the live org's."""
    gained: Counter[tuple[str, str]] = Counter()
    lost: Counter[tuple[str, str]] = Counter()
    deleted = 0
    for change in plan.pending:
        if not change.kind.notifies:
            continue
        if change.action == Action.DELETE:
            deleted += 1
            continue
        old, new = _messages(change)
        was, now = routes(old), routes(new)
        for severity in was.keys() | now.keys():
            before, after = was.get(severity, frozenset()), now.get(severity, frozenset())
            gained.update((severity, t) for t in after - before)
            lost.update((severity, t) for t in before - after)
    lines = []
    for severity in sorted({s for s, _ in gained | lost}, key=severity_order):
        parts = [f"+{t} on {_monitors(n)}" for (s, t), n in sorted(gained.items()) if s == severity]
        parts += [f"-{t} on {_monitors(n)}" for (s, t), n in sorted(lost.items()) if s == severity]
        lines.append(f"{severity}: {', '.join(parts)}")
    if deleted:
        lines.append(f"{_monitors(deleted)} deleted: whoever they notified stops hearing from them")
    return lines + silence_lines(plan) + correction_lines(plan)


# What decides when and what a downtime mutes: a change elsewhere (its message) silences nothing new.
_SILENCING = ("schedule", "monitor_identifier")


def silence_lines(plan: Plan) -> list[str]:
    """Maintenance windows the plan adds, moves or removes: which monitors each silences, and when.
    `window nightly-migrations silences 6 monitors of default (age, depth, ...) daily at 01:00 for 2 h,
    Europe/Berlin time`. Downtimes of one window and queue with one schedule share a line."""
    monitors = [c for c in plan.changes if c.kind.notifies and c.action != Action.DELETE and c.body is not None]
    silenced: dict[tuple[str, str, str, str], list[str]] = {}  # (verb, window, queue, when) -> metrics
    for change in plan.pending:
        key = Key.parse(change.key)
        held = key.maintenance if key is not None else None
        if change.kind is not DOWNTIME or held is None:
            continue
        queue, metric, window = held
        if change.action == Action.DELETE:
            silenced.setdefault(("no longer silences", window, queue, ""), []).append(metric)
            continue
        body = change.body or {}
        if change.action == Action.UPDATE and not any(f.path.startswith(_SILENCING) for f in change.fields):
            continue
        tags = (body.get("monitor_identifier") or {}).get("monitor_tags") or ()
        hit = [str(Key.of(m.key).metric) for m in monitors if selects(tags, m.body or {})]
        verb = "silences" if change.action == Action.CREATE else "now silences"
        when = schedule_words(body.get("schedule") or {})
        silenced.setdefault((verb, window, queue, when), []).extend(hit)
    lines = []
    for (verb, window, queue, when), metrics in sorted(silenced.items(), key=lambda i: (i[0][1], i[0][2], i[0][0])):
        count = _monitors(len(metrics))
        lines.append(
            f"window {window} {verb} {count} of {queue} ({', '.join(sorted(metrics))}){': ' + when if when else ''}"
        )
    return lines


def _messages(change: Change) -> tuple[str, str]:
    """The message before and after the change: a create had none, an update says if it changed it."""
    message = str((change.body or {}).get("message", ""))
    if change.action == Action.CREATE:
        return "", message
    assert change.action == Action.UPDATE
    field = next((f for f in change.fields if f.path == "message"), None)
    return (message, message) if field is None else (str(field.old or ""), str(field.new or ""))


def _monitors(count: int) -> str:
    return f"{count} monitor{'s' * (count != 1)}"
