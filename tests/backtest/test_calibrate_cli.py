"""`obs backtest --calibrate` end to end: the planted history of conftest.py in moto's CloudWatch, the fixture's
monitors synced into the fake Datadog, and real alert events there: the age monitor's transitions 15 minutes
after the model's (a crawler-like lag beyond the latest arrival), and an alert of the DLQ monitor the model has
no twin for; among them a thousand events of another org's monitor, so the search reads a second page."""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from sync.cli.app import main
from sync.core.namespaces import KEY_TAG_PREFIX

from ..fakedd import FakeDatadog, Targeted
from .conftest import HOURS, START
from .test_backtest_cli import DEFS, _backtest

LAG = 15  # minutes the real transitions come after the model's
DLQ_ALERT = START + timedelta(hours=5)
SEARCH = "/api/v2/events/search"
# The title and status Datadog gives an event entering each state, and its transition's name of the state.
SAID = {
    "warning": ("[Warn] introduction age", "warning", "Warn"),
    "alert": ("[Triggered] introduction age", "error", "Alert"),
    "recovery": ("[Recovered] introduction age", "success", "OK"),
}


def _ids(dd: FakeDatadog) -> dict[str, int]:
    return {
        tag.removeprefix(KEY_TAG_PREFIX): monitor_id
        for monitor_id, body in dd.monitors.items()
        for tag in body.get("tags") or ()
        if tag.startswith(KEY_TAG_PREFIX)
    }


def _at(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


@pytest.fixture
def cache(tmp_path: Path) -> str:
    """The backtest's cache for one test: the planted history's day is finished, so a test's first run reads it
    from CloudWatch and the runs after it from here (moto scans every point for each minute of each query)."""
    return str(tmp_path / "cache")


@pytest.fixture
def planted(history: None, dd: FakeDatadog, capsys: pytest.CaptureFixture[str], cache: str) -> list[dict[str, Any]]:
    """The model's notifications of the age monitor (each a transition here), with the real events planted."""
    assert main(["--definitions", str(DEFS), "sync", "--env", "prod", "--yes"]) == 0
    capsys.readouterr()
    code, out, _ = _backtest(capsys, "--cache", cache)
    assert code == 0
    age = next(m for m in json.loads(out)["monitors"] if m["key"] == "prod/introduction/age")
    ids = _ids(dd)
    state = "OK"
    for n in age["notifications"]:
        title, status, entered = SAID[n["type"]]
        at = _at(n["at"]) + timedelta(minutes=LAG)
        # The transition's names only on some, so the titles are read too.
        said = (state, entered) if n["type"] != "warning" else None
        dd.put_event(ids["prod/introduction/age"], at, title, status, said)
        state = entered
    dd.put_event(ids["prod/introduction/dlq"], DLQ_ALERT, "[Triggered] introduction DLQ", "error")
    for n in range(1000):  # another team's flapping monitor: not ours, and a second page
        dd.put_event(7_000_001, START + timedelta(minutes=n % (HOURS * 60)), "[Triggered] theirs", "error")
    dd.reset_log()
    return list(age["notifications"])


def test_calibration_matches_the_lagged_transitions_and_names_the_arrival_assumption(
    planted: list[dict[str, Any]], dd: FakeDatadog, capsys: pytest.CaptureFixture[str], cache: str
) -> None:
    code, out, err = _backtest(capsys, "--cache", cache, "--calibrate")
    assert code == 0, err
    found = json.loads(out)["calibration"]
    assert dd.calls("POST", SEARCH) == 2  # 1,009 events in the period: pages of 1,000
    assert found["events"] == len(planted) + 1  # the other monitor's are not ours
    assert (found["matched"], found["missed"], found["extra"]) == (len(planted), 1, 0)
    assert found["agreement"] == round(len(planted) / (len(planted) + 1), 4)
    assert found["offsets"] == [
        {"source": "crawler", "count": len(planted), "median_minutes": LAG, "min_minutes": LAG, "max_minutes": LAG}
    ]
    assert [p["code"] for p in found["points_at"]] == ["U6"]
    assert "after the model's latest arrival" in found["points_at"][0]["why"]
    by_key = {m["key"]: m for m in found["monitors"]}
    age = by_key["prod/introduction/age"]
    assert [(m["state"], m["offset_minutes"]) for m in age["matched"]] == [
        ({"warning": "warn", "alert": "alert", "recovery": "ok"}[n["type"]], LAG) for n in planted
    ]
    assert [m["model_at"] for m in age["matched"]] == [n["at"] for n in planted]
    assert by_key["prod/introduction/dlq"]["missed"] == [
        {"state": "alert", "at": DLQ_ALERT.strftime("%Y-%m-%dT%H:%M:%SZ")}
    ]
    assert all(not m["extra"] for m in found["monitors"])
    assert found["not_in_datadog"] == []


def test_the_text_report_prints_the_agreement_and_the_assumption(
    planted: list[dict[str, Any]], capsys: pytest.CaptureFixture[str], cache: str
) -> None:
    code, out, err = _backtest(capsys, "--cache", cache, "--calibrate", fmt="text")
    assert code == 0, err
    total = len(planted)
    assert f"agreement {total / (total + 1):.0%}, {total} transitions matched, 1 missed" in out
    assert f"crawler: median +{LAG} min (from +{LAG} to +{LAG}, {total} matched)" in out
    assert (
        f"  U6: crawler transitions come a median {LAG} min after the model's latest arrival ({total} matched)" in out
    )
    assert f"prod/introduction/dlq (crawler): missed: alert at {DLQ_ALERT.strftime('%Y-%m-%d %H:%MZ')}" in out
    code, out, _ = _backtest(capsys, "--cache", cache, "--calibrate", fmt="markdown")
    assert "- points at **U6**:" in out and "| `prod/introduction/dlq` | crawler | 0 | 1 | 0 |" in out


def test_calibrate_without_datadog_keys_says_what_it_needs(
    aws: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("DD_API_KEY", raising=False)
    monkeypatch.delenv("DD_APP_KEY", raising=False)
    code, _, err = _backtest(capsys, "--no-cache", "--calibrate")
    assert code == 1
    assert "DD_API_KEY and DD_APP_KEY are not set" in err and "without --calibrate" in err
    assert "Traceback" not in err and "CloudWatch" not in err  # said before any history is read


def test_a_key_without_events_read_is_told_so(
    planted: list[dict[str, Any]], dd: FakeDatadog, capsys: pytest.CaptureFixture[str], cache: str
) -> None:
    dd.faults.targeted.append(Targeted("POST", SEARCH, status=403, error="Forbidden"))
    code, _, err = _backtest(capsys, "--cache", cache, "--calibrate")
    assert code == 1
    assert "events_read" in err and "Traceback" not in err
