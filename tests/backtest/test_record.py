"""`obs test --record` end to end: a window of the planted history (moto's CloudWatch) around the first incident
written as a scenario, which `obs test` then runs with the fixture's monitors: it passes, and its notifications
are the backtest's of the same window."""

from __future__ import annotations

import json
import shutil
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import yaml

from sync.cli.app import main

from .conftest import INCIDENTS
from .test_backtest_cli import DEFS

FROM = INCIDENTS[0] - timedelta(minutes=30)
TO = INCIDENTS[0] + timedelta(minutes=150)


def _iso(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%MZ")


def _record(capsys: pytest.CaptureFixture[str], defs: Path, out: Path, *extra: str) -> tuple[int, str]:
    window = ["--from", _iso(FROM), "--to", _iso(TO)]
    argv = ["--definitions", str(defs), "test", "--record", "--env", "prod", "--queue", "introduction", *window]
    code = main([*argv, "--out", str(out), "--no-cache", *extra])
    return code, capsys.readouterr().err


@pytest.fixture
def defs(tmp_path: Path) -> Path:
    copy = tmp_path / "defs"
    shutil.copytree(DEFS, copy)
    (copy / "scenarios").mkdir()
    return copy


def test_a_recorded_incident_replays_with_the_backtests_notifications(
    history: None, defs: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = defs / "scenarios" / "introduction-stuck.yaml"
    code, err = _record(capsys, defs, out)
    assert code == 0, err
    text = out.read_text(encoding="utf-8")
    assert text.startswith("# Recorded by obs test --record from CloudWatch: queue introduction in prod,")
    written = yaml.safe_load(text)
    assert (written["environments"], written["incident_at"], written["duration"]) == (["prod"], 0, 180)
    assert all(s["from"] == -360 for s in written["series"])
    assert {(s["metric"], s["of"]) for s in written["series"]} >= {
        ("aws.sqs.approximate_age_of_oldest_message", "queue"),
        ("aws.sqs.approximate_number_of_messages_visible", "dlq"),
        ("aws.sns.number_of_notifications_failed", "topic"),
    }

    assert main(["--definitions", str(defs), "test", "--scenario", "introduction-stuck", "--format", "json"]) == 0
    tested = json.loads(capsys.readouterr().out)
    assert tested["passed"]
    [result] = tested["results"]
    expectations = {e["keys"][0]: e for e in result["expectations"]}

    window = ["--from", _iso(FROM), "--to", _iso(TO), "--no-cache", "--format", "json"]
    assert main(["--definitions", str(defs), "backtest", "--env", "prod", "--queue", "introduction", *window]) == 0
    backtested = json.loads(capsys.readouterr().out)
    sent = {m["key"]: [(_minute(n["at"]), n["type"]) for n in m["notifications"]] for m in backtested["monitors"]}
    paged = {m["key"]: [_minute(n["at"]) for n in m["notifications"] if n["paged"]] for m in backtested["monitors"]}

    # What paged in the backtest is what the scenario expects to page, at the same minutes and nothing else.
    assert set(expectations) == {key for key, minutes in paged.items() if minutes} == {"prod/introduction/age"}
    age = expectations["prod/introduction/age"]
    assert sent["prod/introduction/age"] == [
        (age["first_warning"], "warning"),
        (age["first_page"], "alert"),
        (_first_after(sent["prod/introduction/age"], age["first_page"]), "warning"),
        (age["first_recovery"], "recovery"),
    ]
    assert age["expect"] == f"introduction/age: pages within {age['first_page']} min"
    # Over the whole queue at the latest arrival: as many pages and notifications as the backtest.
    assert result["pages"] == sum(len(minutes) for minutes in paged.values())
    assert result["notifications"] == sum(len(notes) for notes in sent.values())


def _minute(at: str) -> int:
    return int((datetime.fromisoformat(at.replace("Z", "+00:00")) - FROM).total_seconds() // 60)


def _first_after(sent: list[tuple[int, str]], minute: Any) -> int:
    return next(t for t, kind in sent if kind == "warning" and t > minute)


def test_an_existing_file_is_kept_without_force(defs: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = defs / "scenarios" / "kept.yaml"
    out.write_text("name: mine\n", encoding="utf-8")
    code, err = _record(capsys, defs, out)
    assert code == 1
    assert "exists" in err and "--force" in err and "Traceback" not in err
    assert out.read_text(encoding="utf-8") == "name: mine\n"


@pytest.mark.parametrize(
    ("extra", "said"),
    [
        (("--queue", "nosuch"), "prod has no queue 'nosuch'"),
        (("--to", "yesterday"), "--to 'yesterday' is not an ISO 8601 time"),
        (("--to", _iso(FROM - timedelta(minutes=5))), "give --to after --from"),
        (("--from", _iso(FROM - timedelta(days=15))), "at most 20160 minutes"),
    ],
)
def test_bad_input_writes_nothing(
    defs: Path, capsys: pytest.CaptureFixture[str], extra: tuple[str, ...], said: str
) -> None:
    out = defs / "scenarios" / "bad.yaml"
    code, err = _record(capsys, defs, out, *extra)
    assert code == 1
    assert said in err and "Traceback" not in err
    assert not out.exists()


def test_out_in_a_missing_folder_is_refused(defs: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, err = _record(capsys, defs, defs / "nowhere" / "x.yaml")
    assert code == 1
    assert "does not exist" in err


def test_a_window_that_starts_mid_incident_starts_the_monitor_in_alert(
    history: None, defs: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    begin = INCIDENTS[0] + timedelta(minutes=35)
    out = defs / "scenarios" / "introduction-recovers.yaml"
    window = ["--from", _iso(begin), "--to", _iso(begin + timedelta(hours=2))]
    argv = ["--definitions", str(defs), "test", "--record", "--env", "prod", "--queue", "introduction", *window]
    assert main([*argv, "--out", str(out), "--no-cache"]) == 0
    written = yaml.safe_load(out.read_text(encoding="utf-8"))
    assert written["start"]["alerting"] == ["introduction/age"]
    # On the way down the average passes the warning: chat hears it, the pager does not.
    assert written["expect"] == [{"monitor": "introduction/age", "warns_chat_only": True}]
    capsys.readouterr()
    assert main(["--definitions", str(defs), "test", "--scenario", "introduction-recovers", "--format", "json"]) == 0
    [result] = json.loads(capsys.readouterr().out)["results"]
    assert main(["--definitions", str(defs), "backtest", "--env", "prod", "--queue", "introduction", *window,
                 "--no-cache", "--format", "json"]) == 0  # fmt: skip
    backtested = json.loads(capsys.readouterr().out)
    [age] = [m for m in backtested["monitors"] if m["key"] == "prod/introduction/age"]
    assert [n["type"] for n in age["notifications"]] == ["warning", "recovery"]
    [expectation] = result["expectations"]
    recovered = datetime.fromisoformat(age["notifications"][1]["at"].replace("Z", "+00:00"))
    assert expectation["first_recovery"] == int((recovered - begin).total_seconds() // 60)
    assert (result["pages"], result["notifications"]) == (
        0,
        sum(len(m["notifications"]) for m in backtested["monitors"]),
    )
