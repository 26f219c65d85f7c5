"""Maintenance windows as Datadog downtimes, end to end: the real CLI and client against the fake Datadog."""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from sync.core import recurrence
from sync.definitions import maintenance as maintenance_definitions
from sync.definitions.load import load
from sync.definitions.model import Definitions
from sync.expand import maintenance, mute_records
from sync.expand.desired import expand

from .conftest import Obs, Run, commit, desired
from .fakedd import LOST_RESPONSE, FakeDatadog

MARKER = "managed-by:obs obs-key:"


def live_downtimes(dd: FakeDatadog) -> dict[str, dict[str, object]]:
    """Downtimes that are not canceled, by the key in their marker line (or their id when unmarked)."""
    found = {}
    for item in dd.downtimes.values():
        attributes = item["attributes"]
        if attributes["canceled"] is not None:
            continue
        lines = (attributes.get("message") or "").splitlines()
        keys = [line.removeprefix(MARKER) for line in lines if line.startswith(MARKER)]
        found[keys[0] if keys else item["id"]] = attributes
    return found


def changes(plan: dict[str, object]) -> dict[str, str]:
    return {c["key"]: c["action"] for c in plan["changes"] if c["action"] != "unchanged"}  # type: ignore[attr-defined]


def test_sync_creates_the_downtimes_and_the_plan_after_is_empty(obs: Obs, dd: FakeDatadog) -> None:
    assert obs("sync", "--env", "prod") == 0, obs.err
    assert f"Applied: {desired(obs.definitions, 'prod')} created, 0 updated, 0 deleted, 0 failed" in obs.out
    downtimes = live_downtimes(dd)
    assert len(downtimes) == desired(obs.definitions, "prod", kinds=("downtime",))
    age = downtimes["prod/default/age/maintenance/nightly-migrations"]
    assert age["monitor_identifier"] == {"monitor_tags": ["env:prod", "managed-by:obs", "metric:age", "queue:default"]}
    # The server filled in a recurrence start obs did not send (and shows a status and current_downtime).
    assert age["schedule"]["recurrences"][0]["start"]  # type: ignore[index]
    # Neither the DLQ nor the delivery failures are muted, nor the parking queue's retention risk, nor the
    # workers' health, which parked work cannot explain.
    assert not [k for k in downtimes if "/dlq/" in k or "delivery_failures" in k or "retention_risk" in k]
    assert not [k for k in downtimes if "/worker_memory/" in k or "/worker_cpu/" in k]
    # Stopped workers page soon after the window; parked work once the queue has had its time to drain.
    stuck = downtimes["prod/low/consumers_stuck/maintenance/nightly-migrations"]
    assert stuck["schedule"]["recurrences"][0]["duration"] == "145m"  # type: ignore[index]
    assert age["schedule"]["recurrences"][0]["duration"] == "182m"  # type: ignore[index]

    assert obs("plan", "--env", "prod", "--detailed-exitcode") == 0, obs.out
    assert (
        f"Plan: 0 to create, 0 to update, 0 to delete, {desired(obs.definitions, 'prod')} unchanged, 0 unmanaged."
        in obs.out
    )


def test_a_hand_made_downtime_is_never_touched(obs: Obs, dd: FakeDatadog) -> None:
    made = dd.create_downtime(
        {"scope": "*", "monitor_identifier": {"monitor_tags": ["queue:default"]}, "message": "by hand"}
    )
    assert obs("sync", "--env", "prod") == 0, obs.err
    assert obs("sync", "--env", "prod") == 0, obs.err
    assert dd.downtimes[made["id"]]["attributes"]["canceled"] is None
    assert dd.downtimes[made["id"]]["attributes"]["message"] == "by hand"


def test_a_removed_window_is_canceled_and_a_changed_one_updated(obs: Obs, dd: FakeDatadog) -> None:
    assert obs("sync", "--env", "prod") == 0, obs.err
    prod = obs.definitions / "environments" / "prod.yaml"
    text = prod.read_text()
    prod.write_text(text.replace("BYHOUR=1;", "BYHOUR=2;"))
    plan = obs.plan()
    assert set(changes(plan).values()) == {"update"}
    updated = [c for c in plan["changes"] if c["action"] == "update" and c["kind"] == "downtime"]
    assert {c["key"] for c in updated} == set(live_downtimes(dd)), "every downtime of the window moves"
    assert obs("sync", "--env", "prod") == 0, obs.err
    assert obs("plan", "--env", "prod", "--detailed-exitcode") == 0, obs.out

    prod.write_text(text[: text.index("# Nightly database migrations")])
    plan = obs.plan()
    deleted = {k for k, a in changes(plan).items() if a == "delete"}
    assert len(deleted) > 1 and all("/maintenance/" in k for k in deleted)
    fewer = str(len(deleted) - 1)
    assert obs("sync", "--env", "prod", "--max-deletes", fewer) == 1  # the guard counts downtimes like monitors
    assert (
        f"refusing to delete {len(deleted)} of the {desired(obs.definitions, 'prod') + len(deleted)} objects" in obs.err
    )
    assert obs("sync", "--env", "prod") == 0, obs.err
    assert live_downtimes(dd) == {}
    assert obs("plan", "--env", "prod", "--detailed-exitcode") == 0, obs.out


def test_an_edit_in_the_ui_shows_as_drift_and_is_reverted(obs: Obs, dd: FakeDatadog) -> None:
    assert obs("sync", "--env", "prod") == 0, obs.err
    (item,) = [d for d in dd.downtimes.values() if "prod/low/depth/maintenance" in (d["attributes"]["message"] or "")]
    item["attributes"]["schedule"]["recurrences"][0]["duration"] = "1h"
    assert changes(obs.plan()) == {"prod/low/depth/maintenance/nightly-migrations": "update"}
    assert obs("sync", "--env", "prod") == 0, obs.err
    assert obs("plan", "--env", "prod", "--detailed-exitcode") == 0, obs.out


def test_an_ad_hoc_window_survives_a_sync_until_ended(obs: Obs, dd: FakeDatadog) -> None:
    assert obs("sync", "--env", "prod") == 0, obs.err
    scheduled = desired(obs.definitions, "prod", kinds=("downtime",))
    code = obs("maintenance", "start", "--env", "prod", "--queue", "high", "--for", "2h", "--reason", "disk swap")
    assert code == 0, obs.err
    started = {k: v for k, v in live_downtimes(dd).items() if "/maintenance/" not in k}
    # Age, depth, the composites backlog draining, consumers stuck and workers capped, and the two SLO burn
    # alerts of `high`: not its in-flight or worker health, which maintenance cannot explain.
    assert len(started) == 7
    assert all("disk swap" in str(a["message"]) for a in started.values())
    assert obs("plan", "--env", "prod", "--detailed-exitcode") == 0, obs.out
    assert obs("sync", "--env", "prod") == 0, obs.err
    assert len(live_downtimes(dd)) == scheduled + 7

    # Global options are accepted after a subcommand's action too.
    assert obs("maintenance", "list", "--env", "prod", "--definitions", str(obs.definitions)) == 0, obs.err
    assert "nightly-migrations" in obs.out and "disk swap" in obs.out and "ad-hoc" in obs.out
    assert "1 h 59 min left" in obs.out or "2 h left" in obs.out

    assert obs("maintenance", "end", "--env", "prod", "--queue", "high", "--now") == 0, obs.err
    assert "ended 7 ad-hoc downtimes" in obs.out
    assert len(live_downtimes(dd)) == scheduled


def test_maintenance_list_reads_past_a_marker_cut_short(obs: Obs, dd: FakeDatadog) -> None:
    """A downtime whose marker someone edited down to env/queue names no metric: listed as nothing, no crash."""
    assert obs("sync", "--env", "prod") == 0, obs.err
    cut = "prod/low/depth/maintenance/nightly-migrations"
    (item,) = [d for d in dd.downtimes.values() if (d["attributes"]["message"] or "").endswith(cut)]
    item["attributes"]["message"] = item["attributes"]["message"].replace(cut, "prod/low")
    assert obs("maintenance", "list", "--env", "prod", "--queue", "low") == 0, obs.err
    assert "mutes low consumers_stuck" in obs.out  # the window's other downtimes of low
    assert "low depth" not in obs.out


def test_maintenance_refuses_an_unknown_queue(obs: Obs, dd: FakeDatadog) -> None:
    assert obs("maintenance", "start", "--env", "prod", "--queue", "nope", "--for", "1h") == 1
    assert "unknown queue 'nope'" in obs.err


def test_maintenance_help(obs: Obs) -> None:
    for sub in ("start", "end", "list"):
        try:
            obs("maintenance", sub, "--help")
        except SystemExit as exc:
            assert exc.code == 0
        assert "--env" in obs.capsys.readouterr().out or "--env" in obs.out


STAGING_WINDOW = """
maintenance:
  - name: reindex-freeze
    description: Search cluster upgrade.
    schedule: {rrule: "FREQ=WEEKLY;BYDAY=SU;BYHOUR=3;BYMINUTE=30", duration: 90m, timezone: America/New_York}
    queues: {class: feature}
    mutes: [age, depth]
    drain_minutes: 45
"""


def test_diff_of_a_change_that_adds_a_window_says_what_it_silences_and_when(repo: Path, run: Run) -> None:
    staging = repo / "environments" / "staging.yaml"
    staging.write_text(staging.read_text() + STAGING_WINDOW)
    code, out, err = run(repo, "--base", "HEAD", "--env", "staging", "--detailed-exitcode")
    assert (code, err) == (2, "")
    assert "+ downtime staging/introduction/age/maintenance/reindex-freeze" in out
    assert "Who stops being paged, and when (maintenance windows):" in out
    # 90 min, 45 to drain and 32 for the crawled metrics to show it.
    assert (
        "staging: window reindex-freeze silences 1 monitor of introduction (age): "
        "on Sun at 03:30 for 2 h 47 min, America/New_York time"
    ) in out
    # Feature queues have no depth monitor: the window mutes only what exists; the muted monitor says so.
    assert "introduction/depth/maintenance" not in out
    assert "~ monitor staging/introduction/age" in out and "If the maintenance window `reindex-freeze`" in out
    code, markdown, _ = run(repo, "--base", "HEAD", "--env", "staging", "--format", "markdown")
    assert "### Who stops being paged, and when (maintenance windows)" in markdown


def test_diff_refuses_a_new_one_time_window_that_is_already_over(repo: Path, run: Run) -> None:
    staging = repo / "environments" / "staging.yaml"
    before = staging.read_text()
    ended = datetime.now(UTC).replace(microsecond=0) - timedelta(days=2)
    end = ended + timedelta(hours=1)
    window = f'    schedule: {{start: "{ended:%Y-%m-%dT%H:%M:%SZ}", end: "{end:%Y-%m-%dT%H:%M:%SZ}"}}\n'
    staging.write_text(before + mute_window(window))
    code, out, err = run(repo, "--base", "HEAD", "--env", "staging")
    assert code == 1, out
    line = before.count("\n") + 4
    assert f"environments/staging.yaml:{line}: maintenance[0].schedule.end: the one-time window 'upgrade' is new" in err
    assert "already over" in err and "Traceback" not in err
    # A window the base already has may be over: it renders nothing, and the preview goes on.
    commit(repo, "a window")
    code, out, err = run(repo, "--base", "HEAD", "--env", "staging")
    assert (code, err) == (0, ""), err


def mute_window(text: str) -> str:
    return f"""
maintenance:
  - name: upgrade
{text}"""


BAD_WINDOWS = {
    "finer than hourly": (
        '    schedule: {rrule: "FREQ=MINUTELY", duration: 1w}\n',
        "schedule.rrule: FREQ=MINUTELY repeats more often than hourly",
    ),
    "secondly": (
        '    schedule: {rrule: "FREQ=SECONDLY", duration: 1m}\n',
        "schedule.rrule: FREQ=SECONDLY repeats more often than hourly",
    ),
    "no time of day": (
        '    schedule: {rrule: "FREQ=WEEKLY;BYDAY=SA", duration: 2d}\n',
        "schedule.rrule: the RRULE does not fix its time of day",
    ),
    "no minute": (
        '    schedule: {rrule: "FREQ=DAILY;BYHOUR=1", duration: 1h}\n',
        "schedule.rrule: the RRULE does not fix its time of day",
    ),
    "weekday from creation": (
        '    schedule: {rrule: "FREQ=WEEKLY;BYHOUR=1;BYMINUTE=0", duration: 1h}\n',
        "schedule.rrule: the RRULE takes its weekday, day or month from when Datadog creates the downtime",
    ),
    "interval": (
        '    schedule: {rrule: "FREQ=DAILY;INTERVAL=2;BYHOUR=1;BYMINUTE=0", duration: 1h}\n',
        "schedule.rrule: INTERVAL counts from when Datadog creates the downtime",
    ),
    "never fires": (
        '    schedule: {rrule: "FREQ=HOURLY;BYMONTH=2;BYMONTHDAY=30;BYHOUR=1;BYMINUTE=0", duration: 1h}\n',
        "schedule.rrule: the RRULE has no occurrence in the next year",
    ),
    "daily for a day": (
        '    schedule: {rrule: "FREQ=DAILY;BYHOUR=0;BYMINUTE=0", duration: 1d}\n',
        "schedule.duration: the window's occurrences overlap or touch",
    ),
    "hourly for two hours": (
        '    schedule: {rrule: "FREQ=HOURLY;BYHOUR=1,2;BYMINUTE=0", duration: 2h}\n',
        "schedule.rrule: the RRULE does not fix its time of day",
    ),
    "longer than a week with its grace": (
        '    schedule: {rrule: "FREQ=MONTHLY;BYMONTHDAY=1;BYHOUR=0;BYMINUTE=0", duration: 1w}\n',
        "would mute for 10142 min at a time, more than a week with its drain grace",
    ),
    "overlaps with its drain grace": (
        '    schedule: {rrule: "FREQ=DAILY;BYHOUR=0;BYMINUTE=0", duration: 23h}\n',
        "min to drain after each occurrence it reaches the next one",
    ),
    "unknown queue": (
        '    schedule: {rrule: "FREQ=DAILY;BYHOUR=1;BYMINUTE=0", duration: 1h}\n    queues: [lwo]\n',
        "maintenance[0].queues[0]: unknown queue 'lwo' in the window's scope: did you mean 'low'?",
    ),
    "unknown class": (
        '    schedule: {rrule: "FREQ=DAILY;BYHOUR=1;BYMINUTE=0", duration: 1h}\n    queues: {class: shrot}\n',
        "queues.class: unknown class 'shrot'",
    ),
    "unknown metric": (
        '    schedule: {rrule: "FREQ=DAILY;BYHOUR=1;BYMINUTE=0", duration: 1h}\n    mutes: [agee]\n',
        "maintenance[0].mutes[0]: unknown metric 'agee'",
    ),
    "bad rrule": (
        '    schedule: {rrule: "FREQ=SOMETIMES;BYHOUR=1", duration: 1h}\n',
        "schedule.rrule: the RRULE does not parse",
    ),
    "dtstart in rrule": (
        '    schedule: {rrule: "FREQ=DAILY;DTSTART=20270101T000000", duration: 1h}\n',
        "DTSTART is not allowed in the RRULE",
    ),
    "bad duration": (
        '    schedule: {rrule: "FREQ=DAILY;BYHOUR=1;BYMINUTE=0", duration: 2 hours}\n',
        "schedule.duration: '2 hours' is not a duration",
    ),
    "schedule form": (
        '    schedule: {rrule: "FREQ=DAILY"}\n',
        'maintenance[0].schedule: {"rrule": "FREQ=DAILY"} has none of the allowed forms: write {rrule, duration',
    ),
    "scope form": (
        '    schedule: {rrule: "FREQ=DAILY", duration: 1h}\n    queues: cheese\n',
        'maintenance[0].queues: "cheese" has none of the allowed forms: write all, a list of queue names',
    ),
    "bad time zone": (
        '    schedule: {rrule: "FREQ=DAILY;BYHOUR=1;BYMINUTE=0", duration: 1h, timezone: Europe/Berlim}\n',
        "schedule.timezone: unknown time zone 'Europe/Berlim'",
    ),
}


@pytest.mark.parametrize("case", sorted(BAD_WINDOWS))
def test_a_bad_window_is_a_clear_error_naming_file_and_line(obs: Obs, case: str) -> None:
    text, expected = BAD_WINDOWS[case]
    staging = obs.definitions / "environments" / "staging.yaml"
    before = staging.read_text()
    staging.write_text(before + mute_window(text))
    assert obs("validate") == 1
    line = before.count("\n") + 4 + ("queues" in expected or "mutes" in expected)
    assert f"environments/staging.yaml:{line}: " in obs.err, obs.err
    assert expected in obs.err
    assert "Traceback" not in obs.err


ONE_TIME = '    schedule: {start: 2027-01-10T01:00:00Z, end: "2027-01-10T03:00:00+00:00"}\n    queues: [low]\n'


@pytest.mark.parametrize(
    ("now", "schedule"),
    [
        # Before it starts: the whole window, plus the long class's drain time (its backlog threshold: 240 min)
        # and 32 min for the crawled metrics to show the drain.
        (datetime(2027, 1, 1), {"start": "2027-01-10T01:00:00+00:00", "end": "2027-01-10T07:32:00+00:00"}),
        # Started: what is left, with no start (Datadog starts it when it is created; a live one keeps its own).
        (datetime(2027, 1, 10, 2), {"end": "2027-01-10T07:32:00+00:00"}),
        # The window is over but its drain grace is not.
        (datetime(2027, 1, 10, 5), {"end": "2027-01-10T07:32:00+00:00"}),
        # Over with its grace: nothing to render.
        (datetime(2027, 1, 10, 8), None),
        (datetime(2027, 1, 11, 8), None),
    ],
)
def test_a_one_time_window_renders_what_is_left_of_it(
    example_copy: Path, now: datetime, schedule: dict[str, str] | None
) -> None:
    staging = example_copy / "environments" / "staging.yaml"
    staging.write_text(staging.read_text() + mute_window(ONE_TIME))
    defs = load(example_copy, now=now.replace(tzinfo=UTC))
    found = [r for r in expand(defs, "staging") if r.key == "staging/low/depth/maintenance/upgrade"]
    assert [r.body["schedule"] for r in found] == ([schedule] if schedule else [])
    # Past or not, the window stays valid data: only one over for more than a day is worth a warning.
    warnings = maintenance_definitions.stale(defs)
    assert bool(warnings) == (now > datetime(2027, 1, 11, 3))
    if warnings:
        assert warnings[0].startswith("environments/staging.yaml:")
        assert "the one-time window 'upgrade' ended 2027-01-10 03:00 UTC: remove it" in warnings[0]


def test_a_recurrence_past_its_until_stays_valid(example_copy: Path) -> None:
    staging = example_copy / "environments" / "staging.yaml"
    rule = '    schedule: {rrule: "FREQ=DAILY;BYHOUR=1;BYMINUTE=0;UNTIL=20270105T000000Z", duration: 1h}\n'
    staging.write_text(staging.read_text() + mute_window(rule))
    defs = load(example_copy, now=datetime(2027, 6, 1, tzinfo=UTC))
    assert any(r.key.endswith("/maintenance/upgrade") for r in expand(defs, "staging"))


def test_a_started_window_is_created_without_its_past_start_and_then_plans_unchanged(obs: Obs, dd: FakeDatadog) -> None:
    staging = obs.definitions / "environments" / "staging.yaml"
    began = datetime.now(UTC).replace(microsecond=0) - timedelta(minutes=10)
    end = began + timedelta(hours=1)
    text = (
        f'    schedule: {{start: "{began:%Y-%m-%dT%H:%M:%SZ}", end: "{end:%Y-%m-%dT%H:%M:%SZ}"}}\n    queues: [low]\n'
    )
    staging.write_text(staging.read_text() + mute_window(text))
    assert obs("sync", "--env", "staging", "--yes") == 0, obs.err
    written = [d["attributes"] for d in dd.downtimes.values() if "maintenance/upgrade" in d["attributes"]["message"]]
    assert written and all(datetime.fromisoformat(d["schedule"]["start"]) > began for d in written)
    assert obs("plan", "--env", "staging", "--detailed-exitcode") == 0, obs.out


def test_an_ended_window_breaks_nothing_and_deletes_nothing(obs: Obs, dd: FakeDatadog) -> None:
    """Once a one-time window is over, every command still works, and its downtimes (listed as ended, which obs
    reads past) are not deleted: no mass-delete guard stops the environment's sync."""
    staging = obs.definitions / "environments" / "staging.yaml"
    before = staging.read_text()

    def window(start: datetime) -> str:
        end = start + timedelta(hours=1)
        text = f'    schedule: {{start: "{start:%Y-%m-%dT%H:%M:%SZ}", end: "{end:%Y-%m-%dT%H:%M:%SZ}"}}\n'
        return mute_window(text + "    drain_minutes: 0\n")

    soon = datetime.now(UTC).replace(microsecond=0) + timedelta(hours=1)
    staging.write_text(before + window(soon))
    assert obs("sync", "--env", "staging", "--yes") == 0, obs.err
    written = [d for d in dd.downtimes.values() if "maintenance/upgrade" in (d["attributes"]["message"] or "")]
    assert len(written) > 16  # more than the mass-delete guard lets one sync remove
    # Three hours later, as Datadog keeps them: the same window, now in the past.
    earlier = soon - timedelta(hours=4)
    staging.write_text(before + window(earlier))
    for item in written:
        schedule = item["attributes"]["schedule"]
        schedule["start"] = earlier.isoformat()
        schedule["end"] = (earlier + timedelta(hours=1, minutes=32)).isoformat()
    assert obs("validate") == 0, obs.err
    assert obs("maintenance", "list", "--env", "staging") == 0, obs.err
    assert obs("sync", "--env", "staging", "--yes") == 0, obs.err
    # The monitors' drain notes name the window's new times; no downtime is written or deleted.
    assert "Applied: 0 created" in obs.out and " 0 deleted" in obs.out
    assert "downtime" not in "".join(line for line in obs.out.splitlines() if line[:2] in ("+ ", "- ", "~ "))
    assert obs("plan", "--env", "staging", "--detailed-exitcode") == 0, obs.out


def test_mute_records_for_an_evaluation(example: Definitions) -> None:
    env = example.environment("prod")
    queues = example.env_queues["prod"]
    held = maintenance.mutings(example, env, queues, {})
    start = datetime(2027, 3, 1, tzinfo=UTC)  # Monday; Berlin is UTC+1 until 28 March
    records = mute_records.mute_records(env, held, start, start + timedelta(days=1))
    default_age = [r for r in records if "queue:default" in r.monitor_tags and "metric:age" in r.monitor_tags]
    assert [(r.start, r.window_end, r.end) for r in default_age] == [
        (
            datetime(2027, 3, 1, 0, tzinfo=UTC),
            datetime(2027, 3, 1, 2, tzinfo=UTC),
            datetime(2027, 3, 1, 3, 2, tzinfo=UTC),  # 30 min to drain, 32 for the metrics to show it
        )
    ]
    assert not [r for r in records if "metric:dlq" in r.monitor_tags]
    assert {r.window for r in records} == {"nightly-migrations"}
    assert mute_records.records(example, example.environment("prod"), start, start + timedelta(days=1)) == records
    # Dev: Friday 19:00 to Monday 07:00 (Berlin) is one weeknight and one weekend, back to back.
    friday = datetime(2027, 3, 5, 12, tzinfo=UTC)
    dev = mute_records.records(example, example.environment("dev"), friday, friday + timedelta(days=3))
    high_depth = [
        (r.window, r.start, r.window_end)
        for r in dev
        if "queue:high" in r.monitor_tags and "metric:depth" in r.monitor_tags
    ]
    assert high_depth == [
        ("weeknights", datetime(2027, 3, 5, 18, tzinfo=UTC), datetime(2027, 3, 6, 6, tzinfo=UTC)),
        ("weekends", datetime(2027, 3, 6, 6, tzinfo=UTC), datetime(2027, 3, 8, 6, tzinfo=UTC)),
    ]


@pytest.mark.parametrize(
    ("night", "wall_clock"),
    [
        # 29 March 2026: 02:00 CET becomes 03:00 CEST; 01:00-03:00 wall clock is one real hour.
        (
            datetime(2026, 3, 28, 22, tzinfo=UTC),
            (datetime(2026, 3, 29, 0, tzinfo=UTC), datetime(2026, 3, 29, 1, tzinfo=UTC)),
        ),
        # 25 October 2026: 03:00 CEST becomes 02:00 CET; 01:00-03:00 wall clock is three real hours.
        (
            datetime(2026, 10, 24, 21, tzinfo=UTC),
            (datetime(2026, 10, 24, 23, tzinfo=UTC), datetime(2026, 10, 25, 2, tzinfo=UTC)),
        ),
        # An ordinary night either side.
        (
            datetime(2026, 10, 23, 21, tzinfo=UTC),
            (datetime(2026, 10, 23, 23, tzinfo=UTC), datetime(2026, 10, 24, 1, tzinfo=UTC)),
        ),
    ],
)
def test_a_berlin_window_mutes_its_wall_clock_hours_on_the_daylight_saving_nights(
    example: Definitions, night: datetime, wall_clock: tuple[datetime, datetime]
) -> None:
    """prod's nightly-migrations (01:00-03:00 Europe/Berlin, 30 min to drain and 32 to show it): muted from 01:00
    until 03:00 wall clock plus the grace, on both transition nights; what obs writes mutes the same minutes."""
    env = example.environment("prod")
    held = maintenance.mutings(example, env, example.env_queues["prod"], {})
    records = mute_records.mute_records(env, held, night, night + timedelta(hours=12))
    (age,) = [r for r in records if r.monitor_tags == ("env:prod", "managed-by:obs", "metric:age", "queue:default")]
    grace = timedelta(minutes=62)
    assert (age.start, age.window_end) == wall_clock
    assert age.end >= wall_clock[1] + grace  # never unmuted before the wall-clock end plus the grace
    # At most the hour the clocks skip is muted on top (in March, a fixed real duration cannot shrink).
    assert age.end - (wall_clock[1] + grace) <= timedelta(hours=1) * (night.month == 3)
    (written,) = [r for r in expand(example, "prod") if r.key == "prod/default/age/maintenance/nightly-migrations"]
    muted = recurrence.spans(written.body["schedule"], night, night + timedelta(hours=12))
    assert muted == [(age.start, age.end)]


def test_the_drain_note_rides_on_the_muted_monitors_only(example: Definitions) -> None:
    resources = {r.key: r for r in expand(example, "prod")}
    assert "maintenance window `nightly-migrations`" in resources["prod/default/age"].body["message"]
    assert "left work behind" in resources["prod/low/depth"].body["message"]
    assert "nightly-migrations" not in resources["prod/default/dlq"].body["message"]
    assert "nightly-migrations" not in resources["prod/critical/age"].body["message"]


def test_a_thousand_queues_expand_fast(tmp_path: Path, example_copy: Path) -> None:
    inventory = example_copy / "queues.yaml"
    text = inventory.read_text()
    block = text[text.index("  - name: default") : text.index("  - name: low")]
    extra = "".join(block.replace("default", f"bulk{i}") for i in range(1000))
    inventory.write_text(text.replace("  - name: low", extra + "  - name: low", 1))
    prod = example_copy / "environments" / "prod.yaml"
    prod.write_text(prod.read_text().replace("queues: [low, default]", "queues: all"))
    defs = load(example_copy)
    began = time.perf_counter()
    resources = expand(defs, "prod")
    assert sum(r.kind.name == "downtime" for r in resources) > 6000
    assert time.perf_counter() - began < 30


@pytest.mark.heavy(10)
def test_lost_answers_to_downtime_writes_converge_in_one_run(obs: Obs, dd: FakeDatadog) -> None:
    """Creates whose answers were lost are looked up by key, and duplicates removed, one key at a time."""
    # The monitors first, without faults: the faults then fall on the window's writes (its 20 downtimes and
    # the drain notes of the monitors they mute), not on a hundred monitor creates.
    prod = obs.definitions / "environments" / "prod.yaml"
    text = prod.read_text()
    prod.write_text(text[: text.index("# Nightly database migrations")])
    assert obs("sync", "--env", "prod") == 0, obs.out + obs.err
    prod.write_text(text)
    dd.faults.lost_response_rate, dd.faults.error_rate = 0.3, 0.1
    assert obs("sync", "--env", "prod", "--timeout", "2") == 0, obs.out + obs.err
    dd.faults.lost_response_rate = dd.faults.error_rate = 0.0
    assert any(r.status == LOST_RESPONSE and r.path.startswith("/api/v2/downtime") for r in dd.log)
    assert sorted(k for k in live_downtimes(dd) if "/maintenance/" in k) == sorted(
        r.key for r in expand(load(obs.definitions), "prod") if r.kind.name == "downtime"
    )
    assert obs("plan", "--env", "prod", "--detailed-exitcode") == 0, obs.out
