"""The recorded series' shape gives back every point it was made from: `points` (the scenario loader's own
reading of a shape) of the compressed segments equals the recorded series, gaps included, for any series."""

from __future__ import annotations

from itertools import pairwise
from typing import Any

import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from sync.cli.record import segment_line
from sync.core.backtest.compress import segments
from sync.core.evaluation.series import Segment, points

_VALUES = st.floats(allow_nan=False, allow_infinity=False)
Run = tuple[int, dict[int, float]]  # minutes it covers, and its points by minute from its start


def _value(length: int, value: float) -> Run:
    return length, {i: value for i in range(length)}


def _ramp(length: int, low: int, step: int) -> Run:
    return length, {i: float(low + step * i) for i in range(length)}


def _every(count: int, value: float, step: int) -> Run:
    return count * step, {i * step: value for i in range(count)}


def _noise(values: list[float]) -> Run:
    return len(values), dict(enumerate(values))


# Series like real ones: runs of one value, straight runs, silent stretches, points every few minutes, noise.
_RUN: st.SearchStrategy[Run] = st.one_of(
    st.builds(_value, st.integers(1, 30), _VALUES),
    st.builds(_ramp, st.integers(2, 30), st.integers(-(10**6), 10**6), st.integers(-100, 100)),
    st.builds(lambda n: (n, {}), st.integers(1, 30)),
    st.builds(_every, st.integers(2, 8), _VALUES, st.integers(2, 5)),
    st.builds(_noise, st.lists(_VALUES, min_size=1, max_size=10)),
)


@st.composite
def _series(draw: st.DrawFn) -> tuple[dict[int, float], int, int]:
    first = draw(st.integers(-500, 500))
    minute = first
    out: dict[int, float] = {}
    for length, run in draw(st.lists(_RUN, max_size=12)):
        out.update({minute + i: v for i, v in run.items()})
        minute += length
    end = minute + draw(st.integers(0, 5))
    return out, first, end


@settings(max_examples=400, deadline=None)
@given(_series())
def test_points_of_the_shape_are_the_series(drawn: tuple[dict[int, float], int, int]) -> None:
    values, first, end = drawn
    shape = segments(values, first, end)
    assert points(shape, first) == values
    assert all(a.until < b.until for a, b in pairwise(shape))
    assert not shape or shape[-1].until == end


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(st.integers(0, 200), _VALUES, max_size=120), st.integers(0, 20))
def test_any_series_round_trips_through_the_written_file(values: dict[int, float], extra: int) -> None:
    """Arbitrary minutes and values, through the lines `obs test --record` writes: read back, the same points."""
    end = max(values, default=0) + 1 + extra
    shape = segments(values, 0, end)
    written = "".join(f"- {segment_line(s)}\n" for s in shape)
    read = [_segment(raw) for raw in yaml.safe_load(written)]
    assert points(read, 0) == values


def test_runs_become_few_segments() -> None:
    values = (
        {m: 3.0 for m in range(0, 30)} | {m: float(m) for m in range(40, 100)} | {m: 7.0 for m in range(100, 160, 5)}
    )
    assert segments(values, -10, 170) == (
        Segment(0),
        Segment(30, 3.0),
        Segment(40),
        Segment(100, ramp=(40.0, 99.0)),
        Segment(160, 7.0, every=5),
        Segment(170),
    )


def test_a_ramp_that_floats_cannot_reproduce_stays_points() -> None:
    values = {0: 0.1, 1: 0.2, 2: 0.30000000000000004 + 1e-12}
    shape = segments(values, 0, 3)
    assert points(shape, 0) == values
    assert all(s.ramp is None for s in shape)


def _segment(raw: dict[str, Any]) -> Segment:
    ramp = raw.get("ramp")
    return Segment(raw["until"], raw.get("value"), (ramp[0], ramp[1]) if ramp else None, raw.get("every", 1))
