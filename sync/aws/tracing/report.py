"""Render a trace result as a table grouped by cause, or as JSON (pure)."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from datetime import timedelta
from itertools import groupby
from typing import Any

from sync.aws.core.causes import Cause
from sync.aws.core.checks import CHECKABLE, Check
from sync.aws.core.metrics import Cluster, MetricSummary, clusters, period_text
from sync.aws.core.target import iso
from sync.aws.core.trace import Finding, TraceResult
from sync.expand import placement

_BODY_WIDTH = 60
_CLUSTERS = 8


def fill(text: str, queue_arn: str, topic_arn: str) -> str:
    """A cause's text with this queue, this topic and the SNS principal of the topic's region."""
    return (
        text.replace("<queue-arn>", queue_arn or "<queue-arn>")
        .replace("<topic-arn>", topic_arn)
        .replace("<sns-principal>", placement.delivery_principal(topic_arn, queue_arn))
    )


def fix_text(cause: Cause, queue_arn: str, topic_arn: str) -> str:
    return fill(cause.fix, queue_arn, topic_arn)


def _order(finding: Finding) -> tuple[int, str, str, str, str]:
    rank, queue, stamp, ident = finding.failure.sort_key
    return rank, queue, finding.failure.destination, stamp, ident


def _groups(result: TraceResult) -> list[tuple[Cause, str, str, list[Finding]]]:
    """(cause, queue, queue ARN, findings) in cause, queue order; one group per queue ARN."""
    out = []
    for (_, queue, arn), items in groupby(
        sorted(result.findings, key=_order), key=lambda f: (f.failure.cause.key, f.failure.queue, f.failure.destination)
    ):
        found = list(items)
        out.append((found[0].failure.cause, queue, arn or result.target.queue_arn(queue), found))
    return out


def render_json(result: TraceResult) -> str:
    target = result.target
    doc: dict[str, Any] = {
        "topic": target.topic_arn,
        "log_group": target.failure_log_group,
        "window": {
            "start": iso(result.window.start),
            "end": iso(result.window.end),
            "read_until": iso(result.window.read_end),
        },
        "queues": sorted(result.queues),
        "logging": {
            "failure_role": result.logging.failure_role,
            "failure_log_group_exists": result.logging.failure_group_exists,
        },
        "read": vars(result.tally).copy(),
        "failed": len(result.findings),
        "failures": [_finding_json(f) for f in sorted(result.findings, key=lambda f: f.failure.sort_key)],
        "causes": [
            {
                "cause": c.key,
                "title": c.title,
                "queue": q,
                "messages": len(items),
                "explain": fill(c.explain, arn, target.topic_arn),
                "fix": fix_text(c, arn, target.topic_arn),
                "checks": [_check_json(k) for k in _checks_for(result.checks, c.key, q, arn)],
            }
            for c, q, arn, items in _groups(result)
        ],
        "notes": list(result.notes),
    }
    if result.metrics is not None:
        doc["metrics"] = {
            "period_seconds": result.metrics.period_s,
            "failed_total": result.metrics.total_failed,
            "failed": [{"time": iso(t), "sum": v} for t, v in result.metrics.failed],
            "redriven_to_dlq": [{"time": iso(t), "sum": v} for t, v in result.metrics.redriven],
            "failed_to_redrive_to_dlq": [{"time": iso(t), "sum": v} for t, v in result.metrics.not_redriven],
            "filtered_out_invalid_attributes": [{"time": iso(t), "sum": v} for t, v in result.metrics.filtered_invalid],
            "clusters": [
                {"start": iso(c.start), "last": iso(c.last), "total": c.total, "peak": c.peak}
                for c in clusters(result.metrics.failed, result.metrics.period_s)
            ],
        }
    return json.dumps(doc, indent=2, sort_keys=True)


def _finding_json(finding: Finding) -> dict[str, Any]:
    f = finding.failure
    doc: dict[str, Any] = {
        "message_id": f.message_id,
        "published": iso(f.published),
        "logged": iso(f.logged),
        "queue": f.queue,
        "destination": f.destination,
        "cause": f.cause.key,
        "error_code": f.error_code,
        "error_message": f.error_message,
        "status_code": f.status_code,
        "attempts": f.attempts,
        "events": f.events,
        "provider_response": f.raw,
    }
    if finding.published is not None:
        doc["publisher"] = {
            "business_key": finding.published.business_key,
            "log_group": finding.published.log_group,
            "logged": iso(finding.published.logged),
        }
    if finding.parked is not None:
        doc["dlq"] = {
            "queue": finding.parked.dlq,
            "body": finding.parked.body,
            "message_group_id": finding.parked.group_id,
            "message_deduplication_id": finding.parked.deduplication_id,
        }
    return doc


def _check_json(check: Check) -> dict[str, str]:
    return {"checked": check.checked, "outcome": check.outcome, "detail": check.detail}


def _checks_for(checks: Sequence[Check], cause: str, queue: str, queue_arn: str) -> list[Check]:
    return [c for c in checks if c.cause == cause and c.queue == queue and c.queue_arn in {"", queue_arn}]


def render_table(result: TraceResult) -> str:
    target, window, tally = result.target, result.window, result.tally
    lines = [
        f"Failed SNS -> SQS deliveries from {target.topic_arn}",
        f"window {iso(window.start)} .. {iso(window.end)} "
        f"(log group {target.failure_log_group} read until {iso(window.read_end)} for delivery lag)",
    ]
    if result.queues:
        lines.append(f"only deliveries to: {', '.join(sorted(result.queues))}")
    skipped = tally.outside_window + tally.other_queue + tally.other_topic
    unreadable = f", {tally.malformed_sqs} to unreadable SQS ARNs" if tally.malformed_sqs else ""
    lines.append(
        f"read {_count(tally.events, 'log event')}: {_count(tally.failed_events, 'failure event')} "
        f"({skipped} outside the window or filters, {tally.other_protocol} to non-SQS endpoints{unreadable}), "
        f"{_count(tally.successes, 'success', 'es')}, {tally.noise} not delivery-status"
    )
    if result.metrics is not None:
        lines.append(_metric_line(result.metrics, long=window.read_end - window.start > timedelta(days=1)))
    if not result.findings and tally.malformed_sqs:
        lines += [
            "",
            f"No failed delivery obs can place, but {_count(tally.malformed_sqs, 'unreadable failure event')}.",
        ]
    elif not result.findings:
        lines += ["", "No failed deliveries in this window."]
    else:
        counts = Counter(f.failure.cause.title for f in result.findings)
        by_cause = ", ".join(f"{title} {n}" for title, n in sorted(counts.items(), key=lambda i: (-i[1], i[0])))
        lines += ["", f"{_count(len(result.findings), 'failed message')}: {by_cause}"]
    for cause, queue, arn, items in _groups(result):
        lines += ["", f"== {cause.title}: {_count(len(items), 'message')} to {queue} =="]
        lines.append(f"cause:   {fill(cause.explain, arn, target.topic_arn)}")
        lines.append(f"fix:     {fix_text(cause, arn, target.topic_arn)}")
        checks = _checks_for(result.checks, cause.key, queue, arn)
        for check in checks:
            lines.append(f"checked: {check.checked}: {check.outcome}: {check.detail}")
        if not checks:
            unchecked = "not checked" if cause.key in CHECKABLE else "nothing: no live setting shows this cause"
            lines.append(f"checked: {unchecked}")
        lines += _rows(items, show_raw=cause.key == "unknown")
    if result.notes:
        lines += ["", "notes:"] + [f"- {note}" for note in result.notes]
    lines += ["", _count(len(result.findings), "failed message")]
    return "\n".join(lines) + "\n"


def _count(n: int, noun: str, plural: str = "s") -> str:
    return f"{n} {noun}{'' if n == 1 else plural}"


def _metric_line(metrics: MetricSummary, long: bool) -> str:
    """Where NumberOfNotificationsFailed bunches up: the biggest clusters, in time order."""
    found = clusters(metrics.failed, metrics.period_s)
    shown = sorted(sorted(found, key=lambda c: (-c.total, c.start))[:_CLUSTERS], key=lambda c: c.start)

    def when(c: Cluster) -> str:
        cut = slice(5, 16) if long else slice(11, 16)
        return iso(c.start)[cut] + (f"-{iso(c.last)[cut]}" if c.last != c.start else "")

    parts = [f"{when(c)} {c.total:g}" + (f" (peak {c.peak:g})" if c.last != c.start else "") for c in shown]
    more = f", and {len(found) - len(shown)} smaller" if len(found) > len(shown) else ""
    return (
        f"NumberOfNotificationsFailed (Sum per {period_text(metrics.period_s)}): {', '.join(parts) or 'none'}{more}; "
        f"total {metrics.total_failed:g}, redriven to DLQ {metrics.total_redriven:g}, "
        f"failed to redrive to DLQ {metrics.total_not_redriven:g}, "
        f"filtered out for invalid attributes {metrics.total_filtered_invalid:g}"
    )


def _rows(items: list[Finding], show_raw: bool) -> list[str]:
    header = ["MESSAGE ID", "PUBLISHED", "CODE", "STATUS", "ATTEMPTS", "WHAT"]
    parked = any(f.parked for f in items)
    if parked:
        header += ["GROUP", "DEDUP", "BODY"]
    rows = [header]
    for finding in items:
        f = finding.failure
        row = [
            f.message_id,
            iso(f.published) or "?",
            f.error_code or "-",
            _num(f.status_code),
            _num(f.attempts),
            finding.published.business_key if finding.published else "-",
        ]
        if parked:
            p = finding.parked
            row += [p.group_id or "-", p.deduplication_id or "-", _clip(p.body)] if p else ["-", "-", "-"]
        rows.append(row)
    widths = [max(len(r[i]) for r in rows) for i in range(len(header))]
    out = ["  " + "  ".join(cell.ljust(w) for cell, w in zip(r, widths, strict=True)).rstrip() for r in rows]
    if show_raw:
        out += [f"  {f.failure.message_id}: {f.failure.raw or '(empty provider response)'}" for f in items]
    return out


def _num(value: int | None) -> str:
    return "-" if value is None else str(value)


def _clip(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= _BODY_WIDTH else flat[: _BODY_WIDTH - 3] + "..."
