"""Pure: a recorded minute -> value series as a scenario's shape, without changing one point.

The shape's meaning is `sync.core.evaluation.series.points`: whatever segments are written here, `points` gives
back exactly the recorded values at exactly the recorded minutes. Equal values in a row become one `value`
segment, minutes without a point one gap, points of one value every few minutes one segment with `every`, and a
straight run one `ramp`, but only where `points` reproduces every one of its values to the last bit."""

from __future__ import annotations

from collections.abc import Mapping

from sync.core.evaluation.series import Segment, points

_MIN_RAMP = 3  # two points are two values: a ramp says no less
_RAMP_TRIES = 32  # shorter candidates tried when a long straight run does not reproduce exactly
_MAX_EVERY = 60  # the scenario format's limit


def segments(values: Mapping[int, float], first: int, end: int) -> tuple[Segment, ...]:
    """The shape of the points in [first, end): `points(segments(values, first, end), first)` equals them."""
    out: list[Segment] = []
    minute = first
    while minute < end:
        if minute not in values:
            until = next((m for m in range(minute, end) if m in values), end)
            out.append(Segment(until))
        else:
            out.append(_best(values, minute, end))
        minute = out[-1].until
    return tuple(out)


def _best(values: Mapping[int, float], start: int, end: int) -> Segment:
    """The segment from `start` (a minute with a point) that covers the most minutes."""
    value = values[start]
    until = start + 1
    while until < end and until in values and _same(values[until], value):
        until += 1
    options = [Segment(until, value)]
    ramp = _ramp(values, start, end)
    if ramp is not None:
        options.append(ramp)
    spaced = _every(values, start, end)
    if spaced is not None:
        options.append(spaced)
    return max(options, key=lambda s: s.until)  # the first of the longest: a constant before a ramp


def _same(a: float, b: float) -> bool:
    """Equal to the bit: 0.0 and -0.0 are written differently."""
    return a == b and str(a) == str(b)


def _ramp(values: Mapping[int, float], start: int, end: int) -> Segment | None:
    """The longest straight run from `start` that `points` reproduces exactly, if any."""
    longest = start + _straight(values, start, end)
    for until in range(longest, max(start + _MIN_RAMP - 1, longest - _RAMP_TRIES), -1):
        low, high = values[start], values[until - 1]
        if low == high:
            continue  # a constant: a value segment says it
        candidate = Segment(until, ramp=(low, high))
        if _exact(candidate, values, start):
            return candidate
    return None


def _straight(values: Mapping[int, float], start: int, end: int) -> int:
    """How many points in a row from `start` lie near one straight line: the candidates `points` then checks
    exactly. Stops at the first that does not, so a series of unrelated values costs one look per minute."""
    if start + 1 >= end or start + 1 not in values:
        return 1
    step = values[start + 1] - values[start]
    count = 2
    while start + count < end and start + count in values:
        here = values[start + count]
        if not abs(here - values[start + count - 1] - step) <= 1e-9 * max(abs(step), abs(here), 1.0):
            break  # not near the line (or beyond what a float holds)
        count += 1
    return count


def _exact(segment: Segment, values: Mapping[int, float], start: int) -> bool:
    made = points((segment,), start)
    return all(m in values and _same(v, values[m]) for m, v in made.items())


def _every(values: Mapping[int, float], start: int, end: int) -> Segment | None:
    """Points of one value every k minutes (k > 1) and nothing between: one segment, ending after its last point
    and its silent minutes, so the next segment starts where the spacing breaks."""
    step = next((m - start for m in range(start + 1, min(start + _MAX_EVERY + 1, end)) if m in values), None)
    if step is None or step < 2:
        return None
    value = values[start]
    last = start
    while last + step < end and last + step in values and _same(values[last + step], value):
        if any(m in values for m in range(last + 1, last + step)):
            break
        last += step
    if last == start:
        return None
    # The segment runs to the last point's spacing, not past a minute that holds a point.
    until = last + 1
    while until < min(last + step, end) and until not in values:
        until += 1
    return Segment(until, value, every=step)
