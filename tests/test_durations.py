"""The one reader and writer of durations: Datadog's `90m` form, the trace flags' sums, and words for people."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from sync.core import durations


def test_the_duration_parser() -> None:
    assert [durations.minutes(t) for t in ("90m", "2h", "1d", "1w", " 2h ", "2 hours", "0m", "", "h", "1h30m")] == [
        90,
        120,
        1440,
        10080,
        120,
        None,
        None,
        None,
        None,
        None,
    ]
    assert [durations.text(m) for m in (90, 120, 1440, 10080, 1502)] == ["90m", "2h", "1d", "1w", "1502m"]


def test_a_caller_narrows_the_units_and_split_takes_nothing_around_the_duration() -> None:
    assert durations.split("15m", "mh") == (15, "m")
    assert durations.split("1d", "mh") is None
    assert durations.minutes("2d", "mh") is None
    assert durations.split(" 1h", "mh") is None  # a burn-rate window is checked as written


def test_seconds_takes_sums_and_seconds_and_flags_runaway_digits() -> None:
    assert [durations.seconds(t) for t in ("90s", "1h30m", "1H 30M", "0m", "2x", "", "m")] == [
        90,
        5400,
        5400,
        0,
        None,
        None,
        None,
    ]
    assert durations.seconds("9" * 13 + "d") == -1


def test_words_read_as_short_numbers() -> None:
    assert [durations.words(s) for s in (14400, 5400, 129600, 216000, 45)] == ["4 h", "90 min", "36 h", "2.5 d", "45 s"]
    assert durations.number(10000) == "10,000"
    assert [durations.hours_and_minutes(m) for m in (150, 45, 120)] == ["2 h 30 min", "45 min", "2 h"]


@given(st.integers(min_value=1, max_value=10**7))
def test_text_and_minutes_round_trip(total: int) -> None:
    written = durations.text(total)
    assert durations.minutes(written) == total
    assert written == durations.text(durations.minutes(written) or 0)
