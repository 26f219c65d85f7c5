"""The pure comparison of the model's transitions with the real ones, the rules that name an assumption, and
monitor alert events read as transitions."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from hypothesis import given
from hypothesis import strategies as st

from sync.core.backtest import monitor_events
from sync.core.backtest.calibration import (
    COMPOSITE,
    MATCH_MINUTES,
    Calibration,
    Checked,
    Matched,
    Transition,
    match,
    pointers,
)
from sync.core.evaluation.states import ALERT, NO_DATA, OK, WARN

STATES = st.sampled_from([OK, WARN, ALERT, NO_DATA])
TRANSITIONS = st.lists(st.builds(Transition, st.integers(0, 20_000), STATES), max_size=30)


@given(TRANSITIONS)
def test_identical_transitions_agree_fully_with_no_offset(model: list[Transition]) -> None:
    matched, missed, extra = match(model, list(model))
    assert (len(matched), missed, extra) == (len(model), (), ())
    assert all(m.offset == 0 for m in matched)
    checked = Checked("k", "crawler", matched, missed, extra)
    assert Calibration((checked,), (), 0).agreement == (1.0 if model else None)


@given(TRANSITIONS, TRANSITIONS)
def test_every_transition_is_counted_once(model: list[Transition], real: list[Transition]) -> None:
    matched, missed, extra = match(model, real)
    assert len(matched) + len(extra) == len(model)
    assert len(matched) + len(missed) == len(real)
    assert all(abs(m.offset) <= MATCH_MINUTES and m.model.state == m.real.state for m in matched)


@given(TRANSITIONS, st.integers(-MATCH_MINUTES, MATCH_MINUTES))
def test_a_lag_within_the_tolerance_is_matched_at_that_offset(model: list[Transition], lag: int) -> None:
    spaced = [Transition(n * 100, t.state) for n, t in enumerate(model)]  # apart by more than twice the tolerance
    matched, missed, extra = match(spaced, [Transition(t.minute + lag, t.state) for t in spaced])
    assert [m.offset for m in matched] == [lag] * len(spaced) and not missed and not extra


def test_a_transition_beyond_the_tolerance_is_missed_and_extra() -> None:
    matched, missed, extra = match([Transition(100, ALERT)], [Transition(100 + MATCH_MINUTES + 1, ALERT)])
    assert (matched, missed, extra) == ((), (Transition(131, ALERT),), (Transition(100, ALERT),))


def _checked(source: str, offsets: list[int], before: str = OK, **kw: object) -> Checked:
    found = tuple(
        Matched(Transition(n * 100, ALERT, before), Transition(n * 100 + o, ALERT)) for n, o in enumerate(offsets)
    )
    return Checked(f"k-{source}", source, found, (), (), **kw)  # type: ignore[arg-type]


def test_a_steady_lag_points_at_the_arrival_range_and_nothing_else() -> None:
    found = pointers([_checked("crawler", [14, 15, 16])])
    assert [p.assumption.code for p in found] == ["U6"]


def test_offsets_within_the_arrival_range_point_at_nothing() -> None:
    # Real transitions up to 15 minutes before the latest arrival's are within the crawler's range.
    assert pointers([_checked("crawler", [-15, -8, 0, 2])]) == ()
    assert [p.assumption.code for p in pointers([_checked("streams", [-5, -4, -6])])] == ["U6"]


def test_composites_off_their_monitors_point_at_composite_timing() -> None:
    found = pointers([_checked("crawler", [0, 1, 0]), _checked(COMPOSITE, [5, 6, 5])])
    assert [p.assumption.code for p in found] == ["U17"]


def test_late_onsets_on_sqs_monitors_point_at_the_waking_queue() -> None:
    onsets = _checked("crawler", [10, 12, 11], sqs=True)
    rest = _checked("crawler", [0, 1, 0], before=ALERT, sqs=True)
    assert [p.assumption.code for p in pointers([onsets, rest])] == ["U6", "U7"]


def test_no_data_on_one_side_points_at_the_no_data_assumptions() -> None:
    lone = Checked("k", "crawler", (), (Transition(5, NO_DATA, OK),), (Transition(50, OK, NO_DATA),), task_counts=True)
    assert [p.assumption.code for p in pointers([lone])] == ["U9", "U24"]
    assert pointers([Checked("k", "crawler", (), (Transition(5, ALERT),), ())]) == ()


ORIGIN = datetime(2025, 1, 1, tzinfo=UTC)


def _event(
    monitor_id: int, minute: int, title: str, status: str = "", transition: dict[str, str] | None = None
) -> dict:  # type: ignore[type-arg]
    inner = {"monitor_id": monitor_id, "title": title, "status": status, "monitor": {"id": monitor_id}}
    if transition:
        inner["monitor"] = {"id": monitor_id, "transition": transition}
    at = int((ORIGIN + timedelta(minutes=minute)).timestamp() * 1000)
    return {"id": "x", "type": "event", "attributes": {"attributes": {**inner, "timestamp": at}}}


def test_events_are_read_by_transition_then_title_then_status() -> None:
    events = [
        _event(1, 10, "[P1] [Triggered on {queuename:a}] age", "error"),
        _event(1, 12, "[Re-Triggered] age", "error"),  # a renotification: no transition
        _event(1, 20, "age", "", {"source_state": "Alert", "destination_state": "Warn"}),
        _event(1, 30, "[Recovered] age", "success"),
        _event(1, 40, "something", "warning"),
        _event(1, 50, "[No Data] age", "info"),
        _event(2, 10, "[Triggered] theirs", "error"),  # not one of ours
    ]
    read = [event for raw in events if (event := monitor_events.read(raw)) is not None]
    found = monitor_events.transitions(read, {1: "prod/q/age"}, ORIGIN)
    assert found == {
        "prod/q/age": (
            Transition(10, ALERT, None),
            Transition(20, WARN, ALERT),
            Transition(30, OK, WARN),
            Transition(40, WARN, OK),
            Transition(50, NO_DATA, WARN),
        )
    }
