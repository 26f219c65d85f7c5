"""Pure: `obs test` results as text a person on call reads, and as JSON for tools and the documentation."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from sync.core.evaluation.notes import Assumption, order
from sync.core.evaluation.notify import Notification
from sync.core.evaluation.simulate import Result, Verdict
from sync.core.evaluation.states import Run
from sync.report import coverage as covered
from sync.report import pager_load
from sync.report.vocabulary import GREEN, RED, YELLOW, painted

AROUND = 5  # evaluations shown on each side of the minute that decided a failure


def text(
    results: Sequence[tuple[str, Result]],
    skipped: Sequence[tuple[str, str, str]],
    *,
    verbose: bool = False,
    colour: bool = False,
    coverage: covered.Coverage | None = None,
) -> str:
    """`results`: (scenario file, result); `skipped`: (scenario file, environment, why). The assumptions the
    runs relied on are named once at the end; `verbose` says each in full. `coverage`: of a whole run."""
    lines: list[str] = []
    for file, result in results:
        case = result.case
        verdict = painted("pass", GREEN, colour) if result.passed else painted("FAIL", RED, colour)
        lines.append(f"{verdict}  {case.scenario} ({file}) in {case.env}")
        for v in result.verdicts:
            mark = "ok  " if v.passed else painted("FAIL", RED, colour)
            said = f"cannot evaluate: {v.refused}" if v.refused else v.detail
            lines.append(f"  {mark}  {v.expectation.describe()}: {said}")
            if not v.passed and not v.refused:
                lines += _explain(result, v)
        for key, why in result.left_out:
            lines.append(f"  note  left out of `any` and lists, the model cannot evaluate it: {key}: {why}")
    for file, env, why in skipped:
        lines.append(f"{painted('skip', YELLOW, colour)}  {file} in {env}: {why}")
    passed = sum(r.passed for _, r in results)
    lines.append("")
    runs = f"{len(results)} scenario run{'s' * (len(results) != 1)}"
    lines.append(f"{passed} of {runs} passed" + (f", {len(skipped)} skipped" if skipped else ""))
    lines += pager_load.lines(results)
    lines += covered.lines(coverage) if coverage else []
    lines += _assumption_lines(_assumptions(results), verbose)
    return "\n".join(lines)


def _assumption_lines(used: Sequence[Assumption], verbose: bool) -> list[str]:
    """The undocumented Datadog behaviour the runs relied on: named on one line, or each said in full."""
    if not used:
        return []
    if not verbose:
        codes = ", ".join(a.code for a in used)
        return [
            f"modelled assumptions: {codes} (undocumented Datadog behaviour, read conservatively; --verbose says each)"
        ]
    return [
        "modelled assumptions (undocumented Datadog behaviour, read conservatively):",
        *(f"  {a.code}: {a.text}" for a in used),
    ]


def _explain(result: Result, verdict: Verdict) -> list[str]:
    reading = verdict.failed_reading
    decided = verdict.checks[reading]
    key = decided.key
    out = [f"        under the reading '{reading}' (an expectation must hold under every reading)"]
    if key is None or key not in result.runs[reading]:
        return out
    run = result.runs[reading][key]
    body = result.case.monitors[key]
    options: Mapping[str, Any] = body.get("options") or {}
    out.append(f"        {key}: {body.get('query')}")
    thresholds = ", ".join(f"{k} {v}" for k, v in sorted((options.get("thresholds") or {}).items()))
    delay = int(options.get("evaluation_delay") or 0) // 60
    if thresholds:
        out.append(f"        thresholds: {thresholds}; evaluation_delay {delay} min")
    if decided.decisive is None:
        out.append("        (no evaluation changed its state)")
        return out
    out.append(f"        evaluations around minute {decided.decisive}:")
    out += [f"        {line}" for line in _steps(run, decided.decisive)]
    changes = ", ".join(f"{now} at {t}" for t, _, now in run.changes) or "none"
    out.append(f"        state changes over the run: {changes}")
    out += [f"        {line}" for line in _sent(result.sent[reading][key])]
    return out


def _sent(sent: Sequence[Notification]) -> list[str]:
    """The notifications, one line per kind and audience: `renotify (ALERT) at 152, 212 to @pd`."""
    grouped: dict[tuple[str, str, str, bool], list[int]] = {}
    for n in sent:
        grouped.setdefault((n.kind, n.state, " ".join(sorted(n.targets)) or "no one", n.muted), []).append(n.t)
    lines = []
    for (kind, state, who, muted), minutes in sorted(grouped.items(), key=lambda item: item[1][0]):
        shown = ", ".join(str(t) for t in minutes[:8]) + (f" and {len(minutes) - 8} more" if len(minutes) > 8 else "")
        lines.append(f"{kind} ({state}) at minute {shown} to {who}" + (", muted by a downtime" if muted else ""))
    return lines or ["no notifications"]


def _steps(run: Run, around: int) -> list[str]:
    index = next((i for i, s in enumerate(run.steps) if s.t >= around), len(run.steps) - 1)
    chosen = run.steps[max(index - AROUND, 0) : index + AROUND + 1]
    rows = [f"  {'minute':>6}  {'window (points seen)':<22} {'value':>7}  {'state':<8} note"]
    for step in chosen:
        outcome = step.outcome
        window = f"{outcome.start}..{outcome.end} ({outcome.points} pts)" if outcome else "-"
        value = "-" if outcome is None or outcome.value is None else f"{outcome.value:.6g}"
        marker = ">" if step.t == around else " "
        rows.append(f"{marker} {step.t:>6}  {window:<22} {value:>7}  {step.state:<8} {step.note}".rstrip())
    return rows


def as_json(
    results: Sequence[tuple[str, Result]],
    skipped: Sequence[tuple[str, str, str]],
    coverage: covered.Coverage | None = None,
) -> str:
    document: dict[str, Any] = {
        "passed": all(r.passed for _, r in results),
        "results": [_result(file, r) for file, r in results],
        "skipped": [{"scenario": file, "env": env, "reason": why} for file, env, why in skipped],
        "assumptions": [{"code": a.code, "text": a.text} for a in _assumptions(results)],
        "pager_load": pager_load.by_env(results),
    }
    if coverage:
        document["coverage"] = covered.as_json(coverage)
    return json.dumps(document, indent=2, sort_keys=True)


def _result(file: str, result: Result) -> dict[str, Any]:
    return {
        "scenario": result.case.scenario,
        "file": file,
        "env": result.case.env,
        "incident_at": result.case.incident_at,
        "passed": result.passed,
        "assumptions": [a.code for a in result.assumptions],
        # Over every monitor of the queue, at the latest arrival: what on call would receive.
        "pages": result.load.pages if result.load else None,
        "notifications": result.load.notifications if result.load else None,
        "expectations": [
            {
                "monitor": v.expectation.label,
                "keys": list(v.expectation.keys),
                "expect": v.expectation.describe(),
                "passed": v.passed,
                "detail": v.refused or v.detail,
                "refused": bool(v.refused),
                "left_out": [{"key": key, "reason": why} for key, why in v.left_out],
                # The later of the window-edge readings: the earliest Datadog can be relied on to act.
                "first_alert": v.latest("alert"),
                "first_page": v.latest("page"),
                "first_warning": v.latest("warning"),
                "first_recovery": v.latest("recovery"),
                # The sooner reading: the floor the arrival of the data sets (earliest arrival, soonest window edge).
                "earliest_alert": v.earliest("alert"),
                "earliest_page": v.earliest("page"),
            }
            for v in result.verdicts
        ],
    }


def _assumptions(results: Sequence[tuple[str, Result]]) -> list[Assumption]:
    seen = {a for _, r in results for a in r.assumptions}
    return sorted(seen, key=order)
