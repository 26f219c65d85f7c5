"""The one recurrence engine: the rules it refuses, its bounds, and that what obs writes is what Datadog runs."""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta

import pytest

from sync.core import recurrence
from sync.definitions.load import load
from sync.expand.desired import expand

from .conftest import Obs
from .fakedd import FakeDatadog

YEAR = (datetime(2027, 1, 1, tzinfo=UTC), datetime(2028, 1, 1, tzinfo=UTC))


@pytest.mark.parametrize(
    ("rule", "wrong"),
    [
        ("FREQ=SECONDLY", "more often than hourly"),
        ("FREQ=MINUTELY;BYHOUR=1;BYMINUTE=0", "more often than hourly"),
        ("FREQ=WEEKLY;BYDAY=SA", "does not fix its time of day"),
        ("FREQ=DAILY;BYHOUR=1", "does not fix its time of day"),
        ("FREQ=DAILY;BYHOUR=1,13;BYMINUTE=0", "does not fix its time of day"),
        ("FREQ=DAILY;BYHOUR=1;BYMINUTE=0;BYSECOND=30", "does not fix its time of day"),
        ("FREQ=WEEKLY;BYHOUR=1;BYMINUTE=0", "takes its weekday, day or month"),
        ("FREQ=MONTHLY;BYHOUR=1;BYMINUTE=0", "takes its weekday, day or month"),
        ("FREQ=YEARLY;BYHOUR=1;BYMINUTE=0", "takes its weekday, day or month"),
        ("FREQ=DAILY;COUNT=3;BYHOUR=1;BYMINUTE=0", "COUNT counts from when Datadog creates"),
        ("FREQ=WEEKLY;INTERVAL=2;BYDAY=SA;BYHOUR=1;BYMINUTE=0", "INTERVAL counts from when Datadog creates"),
        ("FREQ=DAILY;BYHOUR=1;BYMINUTE=0", None),
        ("FREQ=MONTHLY;BYDAY=1SA;BYHOUR=22;BYMINUTE=30", None),
        ("FREQ=YEARLY;BYMONTH=12;BYMONTHDAY=24;BYHOUR=0;BYMINUTE=0", None),
        ("FREQ=DAILY;BYHOUR=1;BYMINUTE=0;UNTIL=20280101T000000Z", None),
    ],
)
def test_a_rule_must_fix_its_own_times(rule: str, wrong: str | None) -> None:
    found = recurrence.problem(rule)
    assert (found and found[0]) == wrong or (wrong is not None and found is not None and wrong in found[0])


@pytest.mark.parametrize(
    "rule",
    [
        "FREQ=HOURLY;BYMONTH=2;BYMONTHDAY=30;BYHOUR=1;BYMINUTE=0",
        "FREQ=DAILY;BYMONTH=4;BYMONTHDAY=31;BYHOUR=1;BYMINUTE=0",
        "FREQ=MINUTELY;BYMONTH=2;BYMONTHDAY=30",
        "FREQ=SECONDLY;BYMONTH=2;BYMONTHDAY=30",
    ],
)
def test_a_rule_that_never_fires_costs_little(rule: str) -> None:
    """dateutil alone walks such a rule to the year 9999; the engine stops after one 400-year cycle at most."""
    began = time.perf_counter()
    assert recurrence.starts(rule, "Europe/Berlin", *YEAR) == []
    assert time.perf_counter() - began < 10


def test_a_rule_that_fires_every_second_is_capped() -> None:
    found = recurrence.starts("FREQ=SECONDLY", "UTC", *YEAR)
    assert len(found) == recurrence.MAX_OCCURRENCES


def test_until_bounds_a_rule_in_its_own_zone() -> None:
    found = recurrence.starts("FREQ=DAILY;BYHOUR=1;BYMINUTE=0;UNTIL=20270105T000000Z", "UTC", *YEAR)
    assert found == [datetime(2027, 1, day, 1, tzinfo=UTC) for day in range(1, 5)]


def test_occurrences_that_touch_with_their_grace_collide() -> None:
    since = datetime(2027, 1, 1, tzinfo=UTC)
    assert recurrence.collision("FREQ=DAILY;BYHOUR=0;BYMINUTE=0", "UTC", 1440, 0, since) is not None
    assert recurrence.collision("FREQ=DAILY;BYHOUR=0;BYMINUTE=0", "UTC", 1380, 60, since) is not None
    assert recurrence.collision("FREQ=DAILY;BYHOUR=0;BYMINUTE=0", "UTC", 1380, 59, since) is None
    # 23 h and 30 min of real time reach the next 23:00 on the night the clocks go forward.
    clash = recurrence.collision("FREQ=DAILY;BYHOUR=23;BYMINUTE=0", "Europe/Berlin", 1380, 30, since)
    assert clash == (datetime(2027, 3, 28, 21, 30, tzinfo=UTC), datetime(2027, 3, 28, 21, tzinfo=UTC))
    assert recurrence.collision("FREQ=DAILY;BYHOUR=23;BYMINUTE=0", "UTC", 1380, 30, since) is None


def test_a_window_s_time_of_day_and_its_days_for_schedules_that_take_their_own_start() -> None:
    assert recurrence.daily_part("FREQ=WEEKLY;BYDAY=SA;BYHOUR=7;BYMINUTE=30") == ((7, 30), "FREQ=WEEKLY;BYDAY=SA")
    assert recurrence.daily_part("FREQ=DAILY;BYHOUR=1;BYMINUTE=0;BYSECOND=0") == ((1, 0), "FREQ=DAILY")


def test_the_live_recurrence_mutes_what_obs_test_models(obs: Obs, dd: FakeDatadog) -> None:
    """Datadog starts a recurrence when the downtime is created (the fake keeps that local minute as its start):
    with its time of day in the rule, the live downtime's next mute is the first one obs models from that minute
    on, whenever it synced; an occurrence already under way when it synced is not muted."""
    synced = datetime.now(UTC).replace(second=0, microsecond=0)
    assert obs("sync", "--env", "prod", "--yes") == 0, obs.err
    key = "prod/default/age/maintenance/nightly-migrations"
    (found,) = [i for i, d in dd.downtimes.items() if (d["attributes"]["message"] or "").endswith(key)]
    live = dd.shown_downtime(found)["attributes"]
    (written,) = [r.body for r in expand(load(obs.definitions), "prod") if r.key == key]
    modelled = [s for s in recurrence.spans(written["schedule"], synced, synced + timedelta(days=2)) if s[0] >= synced]
    current = live["schedule"]["current_downtime"]
    assert (datetime.fromisoformat(current["start"]), datetime.fromisoformat(current["end"])) == modelled[0]


@pytest.mark.parametrize(
    ("rule", "zone", "length", "longer"),
    [
        ("FREQ=DAILY;BYHOUR=1;BYMINUTE=0", "Europe/Berlin", 120, True),
        ("FREQ=DAILY;BYHOUR=23;BYMINUTE=30", "America/New_York", 2880, True),
        ("FREQ=WEEKLY;BYDAY=SA;BYHOUR=20;BYMINUTE=0", "Australia/Lord_Howe", 720, True),  # a 30-minute change
        ("FREQ=WEEKLY;BYDAY=SA;BYHOUR=22;BYMINUTE=0", "America/Santiago", 180, True),  # changes at midnight
        ("FREQ=MONTHLY;BYDAY=-1SU;BYHOUR=2;BYMINUTE=15", "America/Santiago", 60, False),
        ("FREQ=HOURLY;BYHOUR=1;BYMINUTE=0", "Asia/Tehran", 120, False),  # no change after 2022
        ("FREQ=DAILY;BYHOUR=0;BYMINUTE=0", "UTC", 1380, False),
    ],
)
def test_the_longer_nights_are_those_every_occurrence_of_the_reference_years_shows(
    rule: str, zone: str, length: int, longer: bool
) -> None:
    """Only the days around a change of offset are expanded; every occurrence of the 28 years says the same."""
    every: dict[int, list[datetime]] = {}
    for begins, ends in recurrence.occurrences(rule, zone, length, *recurrence._REFERENCE):
        real = int((ends - begins).total_seconds() // 60)
        if real > length:
            every.setdefault(real, []).append(begins)
    assert recurrence._longer_nights(rule, zone, length) == {real: tuple(nights) for real, nights in every.items()}
    assert bool(every) == longer


def test_a_collision_is_checked_from_the_start_of_the_day() -> None:
    """A load at any minute of a day asks the same question, so it is worked out once a day."""
    morning, evening = datetime(2027, 1, 1, 0, 5, tzinfo=UTC), datetime(2027, 1, 1, 23, 55, tzinfo=UTC)
    rule = "FREQ=DAILY;BYHOUR=23;BYMINUTE=0"
    assert recurrence.collision(rule, "Europe/Berlin", 1380, 30, morning) == recurrence.collision(
        rule, "Europe/Berlin", 1380, 30, evening
    )
    assert recurrence.today(evening) == datetime(2027, 1, 1, tzinfo=UTC)
