"""The scenario language's expectations, each on a small case computed by hand."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from sync.cli.app import main
from sync.core.evaluation.audience import Audience
from sync.core.evaluation.expect import Expectation
from sync.core.evaluation.series import Series
from sync.core.evaluation.simulate import Case, Verdict, simulate
from tests.conftest import ROOT

AGE, DLQ = "e/q/age", "e/q/dlq"
FIXTURE = ROOT / "tests" / "fixtures" / "evaluation"


def _monitor(metric: str, message: str) -> dict[str, Any]:
    return {
        "type": "query alert",
        "query": f"max(last_1m):max:{metric}{{queuename:q}} > 10",
        "options": {"require_full_window": False, "thresholds": {"critical": 10}},
        "message": message,
        "tags": ["queue:q"],
    }


def _verdicts(*expect: Expectation, dlq_to: str = "@pd") -> tuple[Verdict, ...]:
    """age breaches from minute 10 (alert at 11), the DLQ from minute 20 (alert at 21); points arrive at once."""
    series = (
        Series("age", {"queuename": "q"}, {m: 50.0 if m >= 10 else 1.0 for m in range(60)}, {}),
        Series("dlq", {"queuename": "q"}, {m: 50.0 if m >= 20 else 0.0 for m in range(60)}, {}),
    )
    case = Case(
        scenario="s",
        env="e",
        incident_at=5,
        duration=59,
        series=series,
        monitors={
            AGE: _monitor("age", "{{#is_alert}}@pd{{/is_alert}}"),
            DLQ: _monitor("dlq", f"{{{{#is_alert}}}}{dlq_to}{{{{/is_alert}}}}"),
        },
        expectations=expect,
        audience=Audience(frozenset({"@pd"}), frozenset({"@chat"})),
    )
    return simulate(case).verdicts


def test_at_most_counts_the_pages_of_every_monitor_named() -> None:
    two, one = _verdicts(
        Expectation("any", (AGE, DLQ), "pages_at_most", count=2),
        Expectation("any", (AGE, DLQ), "pages_at_most", count=1),
    )
    assert two.passed
    assert not one.passed and one.detail == "paged 2 times (minutes: 11 by q/age, 21 by q/dlq)"


def test_nothing_before_a_minute() -> None:
    # The DLQ pages at 21 with the window end open, at 20 with it closed: the earlier reading decides.
    late, early = _verdicts(
        Expectation("dlq", (DLQ,), "pages_not_before", after=20),
        Expectation("dlq", (DLQ,), "pages_not_before", after=21),
    )
    assert late.passed
    assert not early.passed and early.detail == "paged at minute 20 by q/dlq"
    assert early.failed_reading == "window end closed"


def test_alerts_within_counts_from_its_own_minute() -> None:
    in_time, too_late = _verdicts(
        Expectation("dlq", (DLQ,), "alerts_within", within=1, after=20),
        Expectation("dlq", (DLQ,), "alerts_within", within=15),  # from incident_at 5: the alert at 21 is late
    )
    assert in_time.passed and in_time.detail.startswith("first alert at minute 21, 1 min after minute 20")
    assert not too_late.passed


def test_chat_only_needs_chat_and_no_page() -> None:
    (chat,) = _verdicts(Expectation("dlq", (DLQ,), "chat_only"), dlq_to="@chat")
    (paged,) = _verdicts(Expectation("dlq", (DLQ,), "chat_only"))
    (silent,) = _verdicts(Expectation("dlq", (DLQ,), "chat_only"), dlq_to="")
    assert chat.passed and chat.detail == "reached chat at minute 21, paged no one"
    assert not paged.passed and paged.detail == "paged at minute 21"
    assert not silent.passed and silent.detail == "never reached chat"


def test_one_incident_pages_each_audience_once() -> None:
    (twice,) = _verdicts(Expectation("any", (AGE, DLQ), "one_incident", count=1))
    (allowed,) = _verdicts(Expectation("any", (AGE, DLQ), "one_incident", count=2))
    (joined,) = _verdicts(Expectation("any", (AGE, DLQ), "one_incident", count=1), dlq_to="@chat")
    assert not twice.passed and twice.detail == "paged @pd 2 times (minutes: 11 by q/age, 21 by q/dlq)"
    assert allowed.passed and joined.passed
    assert twice.expectation.describe() == "any: one incident, one page per audience"


SCENARIO = """\
name: new keys
queue: jobs
incident_at: 30
duration: 90
incident_open: true
collection: streams
series:
  - metric: aws.sqs.approximate_age_of_oldest_message
    of: queue
    shape: [{until: 30, value: 1}, {until: 90, ramp: [1, 3600]}]
expect:
  - {monitor: [age, dlq], incident: one}
  - {monitor: age, pages: {at_most: 1}}
  - {monitor: age, pages: {not_before: 35}}
  - {monitor: age, alerts: {within: 30, after: 30}}
  - {monitor: dlq, notifies: none}
"""


def test_the_new_keys_load_and_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    defs = tmp_path / "defs"
    shutil.copytree(FIXTURE, defs)
    (defs / "scenarios" / "new.yaml").write_text(SCENARIO)
    assert main(["--definitions", str(defs), "test", "--scenario", "new", "--format", "json"]) == 0
    (result,) = json.loads(capsys.readouterr().out)["results"]
    described = [e["expect"] for e in result["expectations"]]
    assert described == [
        "age + dlq: one incident, one page per audience",
        "age: pages at most 1 time",
        "age: pages no one before minute 35",
        "age: alerts within 30 min of minute 30",
        "dlq: notifies no one",
    ]


@pytest.mark.parametrize(
    ("expect", "message"),
    [
        ("{monitor: any, incident: two}", "incident"),
        ("{monitor: age, pages: {at_most: -1}}", "at_most"),
        ("{monitor: age, chat_only: false}", "chat_only"),
    ],
)
def test_malformed_new_keys_are_errors(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], expect: str, message: str
) -> None:
    defs = tmp_path / "defs"
    shutil.copytree(FIXTURE, defs)
    text = SCENARIO.split("expect:\n", maxsplit=1)[0] + f"expect:\n  - {expect}\n"
    (defs / "scenarios" / "new.yaml").write_text(text)
    assert main(["--definitions", str(defs), "test", "--scenario", "new"]) == 1
    err = capsys.readouterr().err
    assert "scenarios/new.yaml:12" in err and message in err
