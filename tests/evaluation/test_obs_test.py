"""`obs test` end to end: scenario files loaded with file:line errors, run against the expanded monitors."""

from __future__ import annotations

import contextlib
import io
import json
import shutil
from pathlib import Path

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from sync.cli.app import main
from sync.core.evaluation.query import parse
from sync.core.evaluation.series import Segment, Series, points
from sync.core.evaluation.window import evaluate
from tests.conftest import EXAMPLE, ROOT

FIXTURE = ROOT / "tests" / "fixtures" / "evaluation"


def test_a_passing_scenario_exits_0(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--definitions", str(FIXTURE), "test", "--scenario", "stall"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("pass  consumers stall (scenarios/stall.yaml) in prod\n")
    assert "first page at minute 37, 7 min after minute 30 (in time; deadline 45)" in out
    assert "1 of 1 scenario run passed\n" in out
    # The assumptions are named once, on one line; --verbose says each in full, once.
    (named,) = [line for line in out.splitlines() if line.startswith("modelled assumptions: ")]
    assert "U1, " in named and "--verbose says each" in named
    assert "window edges are undocumented" not in out
    assert main(["--definitions", str(FIXTURE), "test", "--scenario", "stall", "--verbose"]) == 0
    out = capsys.readouterr().out
    assert "U1: window edges are undocumented" in out
    assert out.count("U1:") == 1


def test_a_failing_scenario_exits_1_and_shows_the_evaluations_that_decided_it(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["--definitions", str(FIXTURE), "test", "--scenario", "paged within two minutes"]) == 1
    out = capsys.readouterr().out
    assert (
        "FAIL  age: pages within 2 min: first page at minute 37, 7 min after minute 30 (5 min late; deadline 32)" in out
    )
    assert "prod/jobs/age: max(last_5m):max:aws.sqs.approximate_age_of_oldest_message{queuename:prod-jobs} > 60" in out
    assert "thresholds: critical 60, warning 30; evaluation_delay 5 min" in out
    rows = [line.strip() for line in out.splitlines() if line.strip().startswith((">", "36 ", "38 "))]
    # The window [t - D - W, t - D) at t = 37 is minutes 27..31; minute 31 is the first over 60 s.
    assert rows == [
        "36  26..30 (5 pts)               2  OK",
        ">     37  27..31 (5 pts)              62  ALERT",
        "38  28..32 (5 pts)             122  ALERT",
    ]
    assert "state changes over the run: ALERT at 37" in out
    assert "alert (ALERT) at minute 37 to @pagerduty-jobs" in out


def test_json_lists_the_first_page_of_each_expectation(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--definitions", str(FIXTURE), "test", "--format", "json"]) == 1
    document = json.loads(capsys.readouterr().out)
    assert document["passed"] is False
    by_name = {r["scenario"]: r for r in document["results"]}
    stall = by_name["consumers stall"]
    assert stall["passed"] is True and stall["env"] == "prod" and stall["incident_at"] == 30
    age, dlq = stall["expectations"]
    assert (age["keys"], age["first_page"], age["first_alert"], age["passed"]) == (["prod/jobs/age"], 37, 37, True)
    assert dlq["first_page"] is None and dlq["expect"] == "dlq: notifies no one"
    assert {a["code"] for a in document["assumptions"]} >= {"U1", "U2"}


def test_a_list_of_monitors_counts_their_pages_together(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    defs = tmp_path / "defs"
    shutil.copytree(FIXTURE, defs)
    dlq = "  - {metric: aws.sqs.approximate_number_of_messages_visible, of: dlq, shape: [{until: 10, gap: true}, "
    dlq += "{until: 60, value: 3}]}\ncollection: streams\n"
    text = GOOD.replace("expect:\n", dlq + "expect:\n").replace(
        "{monitor: age, pages: never}", "{monitor: [age, dlq], alerts: {within: 30}}"
    )
    (defs / "scenarios" / "both.yaml").write_text(text)
    prod = (defs / "environments" / "prod.yaml").read_text()
    (defs / "environments" / "prod.yaml").write_text(prod.replace("evaluation_delay: 300", "evaluation_delay: 0"))
    assert main(["--definitions", str(defs), "test", "--scenario", "both", "--format", "json"]) == 0
    (result,) = json.loads(capsys.readouterr().out)["results"]
    (expectation,) = result["expectations"]
    # Only the DLQ breaches: 3 messages from minute 10, streamed (arriving at 13), which the open window
    # [t - 10, t) holds from t = 11: the alert comes with the data, at 13.
    assert expectation["keys"] == ["prod/jobs/age", "prod/jobs/dlq"] and expectation["first_alert"] == 13
    assert expectation["monitor"] == "age + dlq"


def test_unknown_scenario_and_environment_are_errors(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--definitions", str(FIXTURE), "test", "--scenario", "nope"]) == 1
    assert "unknown scenario 'nope': use one of: stall, too-soon" in capsys.readouterr().err
    assert main(["--definitions", str(FIXTURE), "test", "--env", "qa"]) == 1
    assert "unknown environment 'qa'" in capsys.readouterr().err


def test_definitions_without_scenarios_still_validate_but_have_nothing_to_test(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    defs = tmp_path / "defs"
    shutil.copytree(FIXTURE, defs)
    shutil.rmtree(defs / "scenarios")
    assert main(["--definitions", str(defs), "validate"]) == 0
    assert capsys.readouterr().out.startswith("ok: 1 queue, 2 metrics, 1 environment")
    assert main(["--definitions", str(defs), "test"]) == 1
    assert "no scenarios in scenarios/" in capsys.readouterr().err


GOOD = """\
name: x
queue: jobs
incident_at: 5
duration: 60
series:
  - metric: aws.sqs.approximate_age_of_oldest_message
    of: queue
    shape: [{until: 60, value: 1}]
expect:
  - {monitor: age, pages: never}
"""


@pytest.mark.parametrize(
    ("change", "where", "message"),
    [
        (("queue: jobs", "queue: jbos"), "scenarios/bad.yaml:2: queue", "unknown queue 'jbos': did you mean 'jobs'?"),
        (("{monitor: age,", "{monitor: agee,"), "scenarios/bad.yaml:10: expect[0].monitor", "unknown monitor 'agee'"),
        (("{monitor: age,", "{monitor: [age, dlqq],"), "bad.yaml:10: expect[0].monitor[1]", "unknown monitor 'dlqq'"),
        (
            ("incident_at: 5", "incident_at: 5\nenvironments: [prod, qa]"),
            "scenarios/bad.yaml:4: environments[1]",
            "unknown environment 'qa'",
        ),
        (
            ("{monitor: age, pages: never}", "{monitor: age, pages: {within: 5, after: 61}}"),
            "scenarios/bad.yaml:10: expect[0].pages.after",
            "after 61 is past the last minute 60",
        ),
        (("of: queue", "of: topic"), "scenarios/bad.yaml:7: series[0].of", "queue 'jobs' has no topics"),
        (
            ("of: queue", "of: qeue"),
            "scenarios/bad.yaml:7: series[0].of",
            '"qeue" is not allowed',
        ),
        (
            ("[{until: 60, value: 1}]", "[{until: 60, value: 1}, {until: 30, value: 2}]"),
            "scenarios/bad.yaml:8",
            "does not come after",
        ),
        (("[{until: 60, value: 1}]", "[{until: 60, ramp: 1}]"), "scenarios/bad.yaml:8", "ramp"),
        (("pages: never}", "pages: never, alerts: never}"), "scenarios/bad.yaml:10", "one of pages, alerts"),
        (("duration: 60", "duration: 3"), "scenarios/bad.yaml:3: incident_at", "after the last minute 3"),
    ],
)
def test_bad_scenarios_name_file_and_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], change: tuple[str, str], where: str, message: str
) -> None:
    defs = tmp_path / "defs"
    shutil.copytree(FIXTURE, defs)
    assert change[0] in GOOD
    (defs / "scenarios" / "bad.yaml").write_text(GOOD.replace(*change))
    for command in ("validate", "test"):
        assert main(["--definitions", str(defs), command]) == 1
        err = capsys.readouterr().err
        assert where in err and message in err, err
        assert "Traceback" not in err and "internal error" not in err


def test_an_environment_the_scenario_names_must_have_its_monitors(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    defs = tmp_path / "defs"
    shutil.copytree(FIXTURE, defs)
    prod = (defs / "environments" / "prod.yaml").read_text()
    (defs / "environments" / "prod.yaml").write_text(prod + "metrics:\n  age: {enabled: false}\n")
    (defs / "scenarios" / "bad.yaml").write_text(GOOD.replace("incident_at: 5", "incident_at: 5\nenvironments: [prod]"))
    assert main(["--definitions", str(defs), "test", "--scenario", "bad"]) == 1
    assert "scenarios/bad.yaml:11: expect[0]: prod has no age monitor for queue 'jobs'" in capsys.readouterr().err


@settings(max_examples=60, deadline=None)
@given(
    cuts=st.lists(st.integers(1, 20), min_size=1, max_size=6),
    values=st.lists(st.floats(-1e6, 1e6), min_size=6, max_size=6),
    every=st.integers(1, 5),
)
def test_shapes_and_aggregators_hold_their_invariants(cuts: list[int], values: list[float], every: int) -> None:
    ends = [sum(cuts[: i + 1]) for i in range(len(cuts))]
    segments = [Segment(end, values[i], every=every) if i % 2 == 0 else Segment(end) for i, end in enumerate(ends)]
    made = points(segments)
    assert all(0 <= minute < ends[-1] for minute in made)
    data = [Series("m", {"queuename": "q"}, made, {})]
    seen = {}
    for aggregator in ("avg", "max", "min"):
        outcome = evaluate(parse(f"{aggregator}(last_10m):max:m{{queuename:q}} > 1"), data, ends[-1], 0, False, False)
        seen[aggregator] = outcome.value
    if seen["avg"] is None:
        assert seen["max"] is None and seen["min"] is None
    else:
        assert seen["min"] is not None and seen["max"] is not None
        assert seen["min"] - 1e-6 <= seen["avg"] <= seen["max"] + 1e-6


@pytest.mark.heavy(35)
@pytest.mark.example
def test_the_shipped_example_meets_its_scenarios(capsys: pytest.CaptureFixture[str]) -> None:
    """The scenarios say what the person on call needs; a failure here is a monitor to fix, with the reason."""
    code = main(["--definitions", str(EXAMPLE), "test"])
    out = capsys.readouterr().out
    assert code == 0, out


_VALUES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-5, 500),
    st.sampled_from(["queue", "dlq", "topic", "never", "none", "age", "dlq", "any", "jobs", "prod", "x/y", ""]),
    st.lists(st.integers(-2, 200), max_size=3),
    st.fixed_dictionaries(
        {}, optional={"within": st.integers(-1, 50), "count": st.integers(0, 3), "after": st.integers(0, 9)}
    ),
)
_FIELDS = st.sampled_from(
    [
        ("queue",),
        ("incident_at",),
        ("duration",),
        ("environments",),
        ("collection",),
        ("series", 0, "of"),
        ("series", 0, "topic"),
        ("series", 0, "shape", 0, "until"),
        ("series", 0, "shape", 0, "value"),
        ("series", 0, "shape", 0, "ramp"),
        ("series", 0, "shape", 0, "every"),
        ("expect", 0, "monitor"),
        ("expect", 0, "pages"),
        ("expect", 0, "recovers"),
        ("expect", 0, "topic"),
        ("downtimes",),
    ]
)


def test_a_scenario_that_applies_nowhere_says_why_in_its_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # It names no environment, so it is skipped wherever it cannot run: everywhere is a mistake in it. (A key
    # below the environment, queue/name, is looked up in each environment, not when the file is read.)
    shutil.copytree(FIXTURE, tmp_path, dirs_exist_ok=True)
    (tmp_path / "scenarios" / "typo.yaml").write_text(GOOD.replace("monitor: age", "monitor: jobs/agee"))
    assert main(["--definitions", str(tmp_path), "test", "--scenario", "typo"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("error: scenarios/typo.yaml: does not apply in prod: prod has no jobs/agee monitor"), err


@settings(max_examples=40, deadline=None)
@given(changes=st.lists(st.tuples(_FIELDS, _VALUES), min_size=1, max_size=3))
def test_any_broken_scenario_is_a_clear_error_never_a_traceback(
    tmp_path_factory: pytest.TempPathFactory, changes: list[tuple[tuple[str | int, ...], object]]
) -> None:
    defs = tmp_path_factory.mktemp("defs")
    shutil.copytree(FIXTURE, defs, dirs_exist_ok=True)
    data = yaml.safe_load(GOOD)
    for path, value in changes:
        node = data
        for part in path[:-1]:
            node = node[part]
        node[path[-1]] = value
    (defs / "scenarios" / "fuzz.yaml").write_text(yaml.safe_dump(data))
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["--definitions", str(defs), "test", "--scenario", "fuzz"])
    assert code in (0, 1)
    assert "internal error" not in err.getvalue() and "Traceback" not in err.getvalue(), err.getvalue()
    if code == 1 and err.getvalue():
        assert err.getvalue().startswith("error: scenarios/fuzz.yaml"), err.getvalue()


def test_starts_at_places_the_environments_maintenance_windows(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    defs = tmp_path / "defs"
    shutil.copytree(FIXTURE, defs)
    env = defs / "environments" / "prod.yaml"
    env.write_text(
        env.read_text()
        + "maintenance:\n  - name: nightly\n    description: Workers scaled to zero.\n"
        + '    schedule: {rrule: "FREQ=DAILY;BYHOUR=19;BYMINUTE=0", duration: 12h, timezone: Europe/Berlin}\n'
        + "    queues: all\n    mutes: [age]\n"
    )
    stuck = GOOD.replace("value: 1}", "value: 600}").replace(
        "{monitor: age, pages: never}", "{monitor: age, notifies: none}"
    )
    stuck += "collection: streams\n"  # arriving in 3 minutes, inside the 5-minute evaluation delay
    (defs / "scenarios" / "night.yaml").write_text(stuck)
    # Without starts_at the age alert (600 s against 60) reaches the pager.
    assert main(["--definitions", str(defs), "test", "--scenario", "night"]) == 1
    assert "notified @pagerduty-jobs at minute" in capsys.readouterr().out
    # 18:00 UTC is 19:00 in Berlin in December: the window covers the hour, and mutes the alert.
    (defs / "scenarios" / "night.yaml").write_text(stuck + 'starts_at: "2026-12-01T18:00:00Z"\n')
    assert main(["--definitions", str(defs), "test", "--scenario", "night"]) == 0
    assert "ok    age: notifies no one: notified no one" in capsys.readouterr().out
    # An hour earlier the window opens at minute 60, after the alert: it pages.
    (defs / "scenarios" / "night.yaml").write_text(stuck + 'starts_at: "2026-12-01T17:00:00Z"\n')
    assert main(["--definitions", str(defs), "test", "--scenario", "night"]) == 1


def test_audiences_run_a_scenario_as_if_the_environment_notified_them(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    defs = tmp_path / "defs"
    shutil.copytree(FIXTURE, defs)
    loud = GOOD.replace("value: 1}", "value: 600}").replace(
        "{monitor: age, pages: never}", "{monitor: age, notifies: none}"
    )
    loud += "collection: streams\n"
    heard = loud + 'audiences: {page: ["@pagerduty-team"], chat: []}\n'
    (defs / "scenarios" / "heard.yaml").write_text(heard)
    assert main(["--definitions", str(defs), "test", "--scenario", "heard"]) == 1
    out = capsys.readouterr().out
    assert "notified @pagerduty-team at minute" in out and "@pagerduty-jobs" not in out
    (defs / "scenarios" / "heard.yaml").write_text(loud + "audiences: {page: [], chat: []}\n")
    assert main(["--definitions", str(defs), "test", "--scenario", "heard"]) == 0


def test_a_whole_run_names_monitors_no_scenario_shows_notifying_or_quiet(capsys: pytest.CaptureFixture[str]) -> None:
    # The fixture's scenarios expect `age` to page and `dlq` to notify no one; nothing expects either burn-rate
    # alert anything, and nothing expects `age` quiet.
    assert main(["--definitions", str(FIXTURE), "test"]) == 1
    out = capsys.readouterr().out
    assert "no scenario expects these to notify: dlq (short), slo-fast-burn (short), slo-slow-burn (short)\n" in out
    assert "no scenario expects these to stay quiet: age (short), slo-fast-burn (short), slo-slow-burn (short)\n" in out
    assert main(["--definitions", str(FIXTURE), "test", "--format", "json"]) == 1
    document = json.loads(capsys.readouterr().out)
    assert document["coverage"] == {
        "never_notifying": ["dlq (short)", "slo-fast-burn (short)", "slo-slow-burn (short)"],
        "never_quiet": ["age (short)", "slo-fast-burn (short)", "slo-slow-burn (short)"],
    }
    # One scenario shows little of the whole: no coverage is claimed for it.
    assert main(["--definitions", str(FIXTURE), "test", "--scenario", "stall", "--format", "json"]) == 0
    assert "coverage" not in json.loads(capsys.readouterr().out)


def test_scenario_may_be_given_more_than_once(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--definitions", str(FIXTURE), "test", "--scenario", "stall", "--scenario", "too-soon"]) == 1
    out = capsys.readouterr().out
    assert "1 of 2 scenario runs passed\n" in out
    assert "no scenario expects" not in out  # a chosen few say nothing of the whole


def test_a_bound_may_differ_per_environment(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    defs = tmp_path / "defs"
    shutil.copytree(FIXTURE, defs)
    stall = (defs / "scenarios" / "stall.yaml").read_text()
    assert "pages: {within: 15}" in stall  # the age page comes at minute 37, 7 minutes after the stall
    scenario = defs / "scenarios" / "stall.yaml"
    scenario.write_text(stall.replace("pages: {within: 15}", "pages: {within: {prod: 8}}"))
    assert main(["--definitions", str(defs), "test", "--scenario", "stall"]) == 0
    assert "age: pages within 8 min: first page at minute 37" in capsys.readouterr().out
    scenario.write_text(stall.replace("pages: {within: 15}", "pages: {within: {prod: 6}}"))
    assert main(["--definitions", str(defs), "test", "--scenario", "stall"]) == 1
    assert "(1 min late; deadline 36)" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("within", "message"),
    [
        ("{prod: 8, prd: 9}", "scenarios/stall.yaml:12: expect[0].pages.within.prd: unknown environment 'prd'"),
        ("{prod: 8}", "scenarios/stall.yaml:12: expect[0].pages.within: no bound for staging, where the scenario runs"),
        ("{prod: soon}", "scenarios/stall.yaml:12"),
    ],
)
def test_a_bound_per_environment_names_each_environment_the_scenario_runs_in(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], within: str, message: str
) -> None:
    defs = tmp_path / "defs"
    shutil.copytree(FIXTURE, defs)
    prod = (defs / "environments" / "prod.yaml").read_text()
    (defs / "environments" / "staging.yaml").write_text(prod.replace("name: prod", "name: staging"))
    stall = (defs / "scenarios" / "stall.yaml").read_text()
    (defs / "scenarios" / "stall.yaml").write_text(stall.replace("pages: {within: 15}", f"pages: {{within: {within}}}"))
    for command in ("validate", "test"):
        assert main(["--definitions", str(defs), command]) == 1
        err = capsys.readouterr().err
        assert message in err, err
        assert "Traceback" not in err
