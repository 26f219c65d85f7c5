"""SLO corrections in the model: a planned window's corrected slices count as good, so parked work burns no
budget, and the corrections are placed from the very bodies obs syncs."""

from __future__ import annotations

import shutil
from datetime import UTC, datetime
from pathlib import Path

import pytest

from sync.cli.app import main
from sync.core.evaluation import correction, notes
from sync.core.evaluation import slo as slo_model
from sync.core.evaluation.states import ALERT
from tests.conftest import ROOT

from .test_model import _burn_rate_alert, series

FIXTURE = ROOT / "tests" / "fixtures" / "evaluation"
BERLIN_NIGHT = datetime(2026, 12, 1, 23, 0, tzinfo=UTC)  # minute 0: midnight in Berlin


def test_a_corrected_slice_burns_no_budget() -> None:
    slo, alert = _burn_rate_alert("5m")
    parked = series({m: 5000.0 if 60 <= m < 180 else 10.0 for m in range(300)}, "age")
    before = slo_model.run("k", alert, {"e/q/age": slo}, [parked], 300, set())
    assert any(step.state == ALERT for step in before.steps)  # a parked window spends the budget
    used: set[notes.Assumption] = set()
    after = slo_model.run("k", alert, {"e/q/age": slo}, [parked], 300, used, {"e/q/age": ((60, 182),)})
    assert not [step.t for step in after.steps if step.state == ALERT]
    assert notes.CORRECTED_SLICE in used
    # Another SLO's correction corrects nothing here.
    other = slo_model.run("k", alert, {"e/q/age": slo}, [parked], 300, set(), {"e/other/age": ((60, 182),)})
    assert any(step.state == ALERT for step in other.steps)


def test_a_slice_partly_corrected_counts_as_good_and_one_outside_does_not() -> None:
    slo, alert = _burn_rate_alert("5m")
    # Bad from minute 60 to 190; the correction ends at 182, inside the slice [180, 185).
    parked = series({m: 5000.0 if 60 <= m < 190 else 10.0 for m in range(300)}, "age")
    result = slo_model.run("k", alert, {"e/q/age": slo}, [parked], 300, set(), {"e/q/age": ((60, 182),)})
    # Slices [185, 190) is bad and uncorrected: one in twelve of the hour is 16.7 times the budget's pace.
    assert result.state_at(189) != ALERT and result.state_at(190) == ALERT


def nightly(start: int, rrule: str = "FREQ=DAILY", seconds: int = 3 * 3600) -> dict[str, object]:
    return {
        "slo_id": "${slo_id:prod/q/slo}",
        "start": start,
        "duration": seconds,
        "rrule": rrule,
        "timezone": "Europe/Berlin",
    }


def test_a_recurring_correction_repeats_at_the_same_wall_clock_time() -> None:
    first = int(datetime(2024, 1, 1, 0, 0, tzinfo=UTC).timestamp())  # 01:00 in Berlin (winter)
    spans = correction.corrected([nightly(first)], BERLIN_NIGHT, 24 * 60)
    assert spans == {"prod/q/slo": ((60, 240),)}  # 01:00-04:00 Berlin
    # In summer 01:00 in Berlin is 23:00 UTC: the same local hour, a different UTC one.
    summer = datetime(2027, 6, 30, 22, 0, tzinfo=UTC)  # midnight in Berlin
    assert correction.corrected([nightly(first)], summer, 24 * 60) == {"prod/q/slo": ((60, 240),)}
    # A weekly rule corrects only its days: 2026-12-02 is a Wednesday.
    assert correction.corrected([nightly(first, "FREQ=WEEKLY;BYDAY=MO")], BERLIN_NIGHT, 24 * 60) == {"prod/q/slo": ()}


def test_an_occurrence_that_began_before_minute_0_still_counts() -> None:
    first = int(datetime(2024, 1, 1, 0, 0, tzinfo=UTC).timestamp())
    late = datetime(2026, 12, 2, 2, 0, tzinfo=UTC)  # 03:00 in Berlin, inside the 01:00-04:00 correction
    assert correction.corrected([nightly(first)], late, 60) == {"prod/q/slo": ((0, 60),)}


def test_a_one_time_correction_is_its_start_and_end() -> None:
    start = int(datetime(2026, 12, 2, 1, 0, tzinfo=UTC).timestamp())
    body = {"slo_id": "abc", "start": start, "end": start + 5400, "timezone": "UTC"}
    assert correction.corrected([body], BERLIN_NIGHT, 600) == {"abc": ((120, 210),)}
    assert correction.corrected([body], BERLIN_NIGHT, 60) == {"abc": ()}  # after the scenario


WINDOW = """\
maintenance:
  - name: nightly
    description: Workers stop; jobs wait.
    schedule: {rrule: "FREQ=DAILY;BYHOUR=19;BYMINUTE=0", duration: 2h, timezone: Europe/Berlin}
    queues: all
    mutes: [age]
"""
PARKED = """\
name: parked
queue: jobs
incident_at: 60
duration: 300
collection: streams
series:
  - metric: aws.sqs.approximate_age_of_oldest_message
    of: queue
    shape: [{until: 60, value: 1}, {until: 180, ramp: [1, 7200]}, {until: 190, ramp: [7200, 1]}, {until: 300, value: 1}]
expect:
  - {monitor: [jobs/slo-fast-burn, jobs/slo-slow-burn], notifies: none}
"""


def test_a_nightly_parked_window_no_longer_burns_the_budget(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The window mutes only the age monitor: what keeps the burn-rate alerts quiet is the SLO correction."""
    defs = tmp_path / "defs"
    shutil.copytree(FIXTURE, defs)
    env = defs / "environments" / "prod.yaml"
    env.write_text(env.read_text() + WINDOW)
    scenario = defs / "scenarios" / "parked.yaml"
    # 17:00 UTC is 18:00 in Berlin: the window runs from minute 60 to 180, its correction to 213.
    scenario.write_text(PARKED + 'starts_at: "2026-12-01T17:00:00Z"\n')
    assert main(["--definitions", str(defs), "test", "--scenario", "parked", "--verbose"]) == 0, capsys.readouterr().out
    assert "T3: an SLO correction repeats at the same wall-clock time" in capsys.readouterr().out
    # The same parked work at another time of day is no window's: the budget burns, and the fast burn pages.
    scenario.write_text(PARKED + 'starts_at: "2026-12-01T09:00:00Z"\n')
    assert main(["--definitions", str(defs), "test", "--scenario", "parked"]) == 1
    assert "notified @pagerduty-jobs at minute" in capsys.readouterr().out


def test_an_until_in_local_time_ends_the_corrections() -> None:
    first = int(datetime(2024, 1, 1, 0, 0, tzinfo=UTC).timestamp())
    rule = "FREQ=DAILY;UNTIL=20261202T000000"  # the last start is 2026-12-01 01:00 in Berlin
    night = datetime(2026, 11, 30, 23, 0, tzinfo=UTC)  # midnight of Dec 1 in Berlin
    assert correction.corrected([nightly(first, rule)], night, 2 * 24 * 60) == {"prod/q/slo": ((60, 240),)}
