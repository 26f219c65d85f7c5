"""Render an audit for a terminal, for CI (JSON) or for a pull request (Markdown) (pure)."""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

from sync.aws.core.audit import AuditResult
from sync.aws.core.findings import SEVERITIES, Finding, at_least


def render(result: AuditResult, fmt: str, severity: str) -> str:
    shown = at_least(result.findings, severity)
    return {"text": _text, "json": _json, "markdown": _markdown}[fmt](result, shown, severity)


def summary(result: AuditResult, shown: tuple[Finding, ...], severity: str) -> str:
    counts = Counter(f.severity for f in shown)
    parts = [f"{counts[s]} {s}{'' if counts[s] == 1 else 's'}" for s in SEVERITIES if counts[s]]
    found = f"{len(shown)} finding{'' if len(shown) == 1 else 's'}"
    level = f"at or above {severity}" if severity != SEVERITIES[-1] else "of any severity"
    detail = f" ({', '.join(parts)})" if parts else ""
    queues = f"{len(result.queues)} queue{'' if len(result.queues) == 1 else 's'}"
    return f"obs audit {result.env} (account {result.account}, {result.region}): {queues}, {found} {level}{detail}"


def _text(result: AuditResult, shown: tuple[Finding, ...], severity: str) -> str:
    lines = [summary(result, shown, severity)]
    for f in shown:
        lines += [
            "",
            f"{f.severity.upper()} {f.check}: {f.queue or '-'}: {f.resource}",
            f"  declared: {f.declared}",
            f"  live:     {f.live}",
            f"  why:      {f.why}",
            f"  fix:      {f.fix}",
        ]
    if not shown:
        lines += ["", "The live wiring matches the definitions."]
    return "\n".join(lines) + "\n"


def _json(result: AuditResult, shown: tuple[Finding, ...], severity: str) -> str:
    doc: dict[str, Any] = {
        "env": result.env,
        "account": result.account,
        "region": result.region,
        "severity": severity,
        "queues": list(result.queues),
        "counts": {s: sum(1 for f in shown if f.severity == s) for s in SEVERITIES},
        "findings": [
            {
                "severity": f.severity,
                "check": f.check,
                "queue": f.queue,
                "resource": f.resource,
                "declared": f.declared,
                "live": f.live,
                "why": f.why,
                "fix": f.fix,
            }
            for f in shown
        ],
    }
    return json.dumps(doc, indent=2, sort_keys=True) + "\n"


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _markdown(result: AuditResult, shown: tuple[Finding, ...], severity: str) -> str:
    lines = [f"### {summary(result, shown, severity)}", ""]
    if not shown:
        return "\n".join([*lines, "The live wiring matches the definitions."]) + "\n"
    lines += [
        "| severity | queue | check | resource | declared | live | why | fix |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for f in shown:
        cells = [f.severity, f.queue, f.check, f.resource, f.declared, f.live, f.why]
        lines.append("| " + " | ".join(_cell(c) for c in cells) + f" | `{_cell(f.fix)}` |")
    return "\n".join(lines) + "\n"
