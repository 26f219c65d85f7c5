"""Judge one live queue's attributes against its declaration: DLQ, visibility, polling, retention, FIFO (pure)."""

from __future__ import annotations

import json
import math
import shlex
from collections.abc import Mapping

from sync.aws.core.declared import QueueSpec
from sync.aws.core.findings import ERROR, INFO, WARNING, Finding
from sync.core.retention import MAX_RETENTION_SECONDS, dlq_life

LONG_POLL_SECONDS = 20  # the longest ReceiveMessage wait SQS allows
VISIBILITY_MARGIN = 1.1  # visibility timeout = 1.1 x the longest a job may run

Attributes = Mapping[str, str]


def set_attributes(region: str, url: str, values: Mapping[str, str]) -> str:
    """The aws CLI command that sets queue attributes, quoted for a POSIX shell."""
    body = json.dumps(dict(sorted(values.items())), separators=(",", ":"))
    return f"aws sqs set-queue-attributes --region {region} --queue-url {url} --attributes {shlex.quote(body)}"


def missing(spec: QueueSpec, what: str, name: str, why: str, fix: str) -> Finding:
    return Finding(ERROR, f"{what}-missing", spec.queue, name, f"{what} {name}", "does not exist", why, fix)


def check_queue(spec: QueueSpec, live: Attributes) -> list[Finding]:
    """Everything about the queue itself that the definitions (or SQS good practice) fix."""
    return [
        *_redrive(spec, live),
        *_visibility(spec, live),
        *_polling(spec, live),
        *_retention(spec, live),
        *_fifo(spec, live),
    ]


def _finding(spec: QueueSpec, severity: str, check: str, declared: str, live: str, why: str, fix: str) -> Finding:
    return Finding(severity, check, spec.queue, spec.name, declared, live, why, fix)


def redrive_policy(live: Attributes) -> tuple[str, int | None]:
    """(DLQ ARN, maxReceiveCount) of a queue's RedrivePolicy; ("", None) when it has none."""
    try:
        doc = json.loads(live.get("RedrivePolicy") or "{}")
    except ValueError:
        return "", None
    if not isinstance(doc, dict):
        return "", None
    count = doc.get("maxReceiveCount")
    try:
        received = int(count) if count is not None else None
    except (TypeError, ValueError):
        received = None
    return str(doc.get("deadLetterTargetArn", "")), received


def _redrive(spec: QueueSpec, live: Attributes) -> list[Finding]:
    if spec.dlq_arn is None or spec.max_receive_count is None:
        return []
    declared = f"DLQ {spec.dlq_name} after {spec.max_receive_count} receives"
    policy = json.dumps({"deadLetterTargetArn": spec.dlq_arn, "maxReceiveCount": str(spec.max_receive_count)})
    fix = set_attributes(spec.region, spec.url, {"RedrivePolicy": policy})
    target, count = redrive_policy(live)
    if not target:
        why = "a message that keeps failing is received again and again until retention deletes it, unseen"
        return [_finding(spec, ERROR, "redrive-policy", declared, "no RedrivePolicy", why, fix)]
    if target != spec.dlq_arn:
        why = "failed messages go to a queue nobody monitors as this queue's DLQ"
        return [_finding(spec, ERROR, "redrive-policy", declared, f"RedrivePolicy to {target}", why, fix)]
    if count != spec.max_receive_count:
        why = "the DLQ monitors and runbook assume the declared number of attempts"
        live_text = f"maxReceiveCount {count if count is not None else 'unreadable'}"
        return [_finding(spec, ERROR, "max-receive-count", declared, live_text, why, fix)]
    return []


def _seconds(live: Attributes, name: str) -> int | None:
    try:
        return int(live[name])
    except (KeyError, ValueError):
        return None


def _visibility(spec: QueueSpec, live: Attributes) -> list[Finding]:
    timeout = _seconds(live, "VisibilityTimeout")
    if spec.max_processing_seconds is None:
        why = "without it obs cannot tell whether a job outlives its visibility timeout and runs twice"
        fix = "declare max_processing_seconds on the queue or its class in queues.yaml"
        return [_finding(spec, INFO, "visibility-timeout", "no max_processing_seconds", f"{timeout} s", why, fix)]
    wanted = math.ceil(spec.max_processing_seconds * VISIBILITY_MARGIN)
    if timeout is not None and timeout >= wanted:
        return []
    declared = f">= {wanted} s (1.1 x max_processing_seconds {spec.max_processing_seconds})"
    why = "a job still running when the timeout ends becomes visible again and runs twice, in parallel"
    fix = set_attributes(spec.region, spec.url, {"VisibilityTimeout": str(min(wanted, 43_200))})
    live_text = f"VisibilityTimeout {timeout} s" if timeout is not None else "VisibilityTimeout unreadable"
    return [_finding(spec, ERROR, "visibility-timeout", declared, live_text, why, fix)]


def _polling(spec: QueueSpec, live: Attributes) -> list[Finding]:
    wait = _seconds(live, "ReceiveMessageWaitTimeSeconds")
    if wait is not None and wait >= LONG_POLL_SECONDS:
        return []
    why = (
        "short polling samples a subset of SQS servers: receives come back empty while messages wait, "
        "and every empty receive is billed"
    )
    fix = set_attributes(spec.region, spec.url, {"ReceiveMessageWaitTimeSeconds": str(LONG_POLL_SECONDS)})
    live_text = f"ReceiveMessageWaitTimeSeconds {wait if wait is not None else 'unreadable'}"
    return [_finding(spec, WARNING, "long-polling", f"{LONG_POLL_SECONDS} s", live_text, why, fix)]


def _retention(spec: QueueSpec, live: Attributes) -> list[Finding]:
    period = _seconds(live, "MessageRetentionPeriod")
    if period == spec.retention_seconds:
        return []
    fix = set_attributes(spec.region, spec.url, {"MessageRetentionPeriod": str(spec.retention_seconds)})
    fix += " (or set retention_seconds in queues.yaml to the live value)"
    shorter = period is None or period < spec.retention_seconds
    why = (
        "messages expire sooner than the retention-risk monitor assumes, so they are deleted before it fires"
        if shorter
        else "the retention-risk monitor fires long before messages are actually at risk"
    )
    live_text = f"MessageRetentionPeriod {period if period is not None else 'unreadable'} s"
    declared = f"retention_seconds {spec.retention_seconds}"
    return [_finding(spec, ERROR if shorter else WARNING, "retention", declared, live_text, why, fix)]


def _fifo(spec: QueueSpec, live: Attributes) -> list[Finding]:
    fifo = live.get("FifoQueue", "false").lower() == "true"
    out = []
    if fifo != spec.fifo:
        why = "ordering and deduplication differ from what publishers and consumers were built for"
        fix = "recreate the queue as declared (FIFO cannot be changed on a live queue), or fix fifo in queues.yaml"
        out.append(_finding(spec, ERROR, "fifo", f"fifo {spec.fifo}", f"FifoQueue {fifo}", why, fix))
    wanted = spec.content_based_deduplication
    dedup = live.get("ContentBasedDeduplication", "false").lower() == "true"
    if fifo and wanted is not None and dedup != wanted:
        why = (
            "identical bodies within 5 minutes are silently dropped as duplicates"
            if dedup
            else "senders without a MessageDeduplicationId are refused"
        )
        fix = set_attributes(spec.region, spec.url, {"ContentBasedDeduplication": str(wanted).lower()})
        declared = f"content_based_deduplication {str(wanted).lower()}"
        out.append(_finding(spec, ERROR, "content-deduplication", declared, f"{dedup}".lower(), why, fix))
    return out


def check_dlq_retention(spec: QueueSpec, source: Attributes, dlq: Attributes) -> list[Finding]:
    """A standard queue's message keeps its first enqueue time in the DLQ, so the DLQ must keep it longer."""
    if spec.fifo or spec.dlq_name is None:
        return []  # FIFO queues reset the enqueue time when a message moves to the DLQ
    kept, source_kept = _seconds(dlq, "MessageRetentionPeriod"), _seconds(source, "MessageRetentionPeriod")
    if kept is None or source_kept is None or dlq_life(source_kept, kept, fifo=False) > 0:
        return []
    wanted = min(MAX_RETENTION_SECONDS, max(source_kept + 86_400, 2 * source_kept))
    region, url = spec.region, spec.url.rsplit("/", 1)[0] + "/" + spec.dlq_name
    fix = (
        set_attributes(region, url, {"MessageRetentionPeriod": str(wanted)})
        if wanted > source_kept
        else f"lower the retention of {spec.name} below 14 days so its DLQ can keep messages longer"
    )
    why = (
        "expiry counts from when the message was first sent, so a message reaching the DLQ late in its life "
        "is deleted from the DLQ almost at once"
    )
    declared, live = f"longer than {spec.name}'s {source_kept} s", f"MessageRetentionPeriod {kept} s"
    return [Finding(ERROR, "dlq-retention", spec.queue, spec.dlq_name, declared, live, why, fix)]
