"""The rendered report, table and JSON, against reviewed golden files (pytest --update-golden rewrites them)."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from sync.aws.core import causes
from sync.aws.core.checks import CONFIRMS, Check
from sync.aws.core.dlq import DlqMessage
from sync.aws.core.facts import LoggingStatus
from sync.aws.core.failures import Collector, Window
from sync.aws.core.metrics import MetricSummary
from sync.aws.core.publisher import Published
from sync.aws.core.target import TraceTarget
from sync.aws.core.trace import Finding, TraceResult
from sync.aws.tracing.report import render_json, render_table
from tests.trace.trace_world import failure_event

GOLDEN = Path(__file__).parent / "fixtures" / "golden"
T0 = datetime(2026, 11, 30, 10, 0, tzinfo=UTC)
TOPIC = "arn:aws:sns:us-east-1:123456789012:prod-jobs-critical"


def result() -> TraceResult:
    collector = Collector(Window(T0, T0 + timedelta(hours=1)), TOPIC)
    cases = [
        ("access_denied", "11111111-3022-50d3-8b55-d784f706e076", "prod-critical", 5),
        ("access_denied", "22222222-3022-50d3-8b55-d784f706e076", "prod-critical", 7),
        ("kms_access_denied", "33333333-9d8e-5f40-b657-c1eb69e60b29", "prod-kms", 9),
        ("unknown", "44444444-8293-54a5-b6c7-d8e9f0a1b2c3", "prod-weird", 11),
    ]
    for name, ident, queue, minute in cases:
        published = T0 + timedelta(minutes=minute)
        message = failure_event(name, message_id=ident, topic_arn=TOPIC, queue=queue, published=published)
        collector.add(message, int((published + timedelta(seconds=18)).timestamp() * 1000))
    collector.add("noise", int(T0.timestamp() * 1000))
    findings = [Finding(f) for f in collector.failures()]
    findings[0] = replace(
        findings[0],
        published=Published(findings[0].failure.message_id, "job-42", "/ecs/prod/api", T0),
        parked=DlqMessage("prod-jobs-critical-undeliverable", findings[0].failure.message_id, '{"job_id": 42}', "", ""),
    )
    return TraceResult(
        target=TraceTarget(TOPIC),
        window=collector.window,
        queues=frozenset(),
        logging=LoggingStatus("arn:aws:iam::123456789012:role/sns-logs", "", "", failure_group_exists=True),
        findings=tuple(findings),
        tally=collector.tally,
        metrics=MetricSummary(
            60, tuple((T0 + timedelta(minutes=m), v) for m, v in [(5, 1.0), (6, 2.0), (7, 1.0), (30, 1.0)]), ()
        ),
        checks=(
            Check(causes.QUEUE_POLICY, "prod-critical", "queue policy", CONFIRMS, "the queue has no access policy"),
        ),
        subscriptions=(),
        notes=("the subscription to prod-kms has no DLQ",),
    )


@pytest.mark.parametrize(("name", "render"), [("report.txt", render_table), ("report.json", render_json)])
def test_report_matches_golden(name: str, render: Callable[[TraceResult], str], request: pytest.FixtureRequest) -> None:
    text = render(result())
    path = GOLDEN / name
    if request.config.getoption("--update-golden", default=False):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    assert text == path.read_text(), f"{name} differs from its golden file (pytest --update-golden)"


def test_json_report_is_machine_readable_and_sorted() -> None:
    doc = json.loads(render_json(result()))
    assert [f["message_id"][:8] for f in doc["failures"]] == ["11111111", "22222222", "33333333", "44444444"]
    assert [c["cause"] for c in doc["causes"]] == ["queue-policy", "kms-access", "unknown"]
    assert doc["failures"][0]["publisher"]["business_key"] == "job-42"
    assert doc["failures"][0]["dlq"]["body"] == '{"job_id": 42}'
    assert doc["window"] == {
        "start": "2026-11-30T10:00:00.000Z",
        "end": "2026-11-30T11:00:00.000Z",
        "read_until": "2026-11-30T11:05:00.000Z",
    }


def test_fixes_name_the_regional_sns_principal_in_opt_in_regions() -> None:
    hong_kong = TOPIC.replace("us-east-1", "ap-east-1")
    base = result()
    findings = tuple(
        replace(f, failure=replace(f.failure, destination=f.failure.destination.replace("us-east-1", "ap-east-1")))
        for f in base.findings
    )
    doc = json.loads(render_json(replace(base, target=TraceTarget(hong_kong), findings=findings)))
    policy_fix = next(c["fix"] for c in doc["causes"] if c["cause"] == "queue-policy")
    assert '"Principal":{"Service":"sns.ap-east-1.amazonaws.com"}' in policy_fix
    assert '"Resource":"arn:aws:sqs:ap-east-1:123456789012:prod-critical"' in policy_fix
    kms = next(c for c in doc["causes"] if c["cause"] == "kms-access")
    assert "sns.ap-east-1.amazonaws.com" in kms["fix"] and "sns.ap-east-1.amazonaws.com" in kms["explain"]
    assert "sns.amazonaws.com" not in json.dumps(doc["causes"])


def test_the_metric_line_says_its_period() -> None:
    hourly = replace(result(), metrics=MetricSummary(3600, ((T0, 2.0),), ()))
    assert "NumberOfNotificationsFailed (Sum per 1 h): 10:00 2; total 2" in render_table(hourly)
    five = replace(result(), metrics=MetricSummary(300, ((T0, 2.0),), ()))
    assert "(Sum per 5 min)" in render_table(five)
