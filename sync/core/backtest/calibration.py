"""Pure: the model's state transitions over real history compared with the monitors' real ones (Datadog's monitor
alert events): per monitor, the transitions matched (and by how many minutes the real one came after the
model's), missed (real, the model has none) and extra (the model's, not real); the agreement, the offsets per
metric source, and which of the model's undocumented assumptions the differences point at.

The model's transitions are those of the reading the report shows: the latest arrival (U6), so a real transition
that comes after its model twin came later than the latest arrival the model allows."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from statistics import median

from sync.core.backtest.replay import Replay, Replayed
from sync.core.evaluation import notes
from sync.core.evaluation.series import ARRIVALS, LATEST
from sync.core.evaluation.states import NO_DATA, OK
from sync.core.evaluation.tasks import TASK_COUNTS

# Two transitions into the same state this close are one: the arrival range spans 15 minutes (U6, crawled
# points 2 to 17 minutes late) and a waking queue adds up to 15 more (U7). Further apart, they are two
# different transitions, one of them missed and the other extra.
MATCH_MINUTES = 30
SLACK = 2  # minutes of offset that say nothing: an event is stamped within its evaluation minute, a window edge is 1
MIN_MATCHED = 3  # fewer matched transitions than this are too few to say a source or a kind runs late or early
COMPOSITE = "composite"  # a composite's timing is its monitors', plus its own (U17): a group of its own


@dataclass(frozen=True)
class Transition:
    minute: int  # the replay's minute (0: the first fetched)
    state: str  # the state entered: OK, WARN, ALERT or NO DATA
    before: str | None = None  # the state left, where known


@dataclass(frozen=True)
class Matched:
    model: Transition
    real: Transition

    @property
    def offset(self) -> int:
        """Minutes the real transition came after the model's (negative: before)."""
        return self.real.minute - self.model.minute


@dataclass(frozen=True)
class Checked:
    """One monitor's transitions, the model's against the real ones."""

    key: str
    source: str  # crawler, streams, or composite
    matched: tuple[Matched, ...]
    missed: tuple[Transition, ...]
    extra: tuple[Transition, ...]
    task_counts: bool = False  # reads ECS task counts (U24)
    sqs: bool = False  # reads an SQS queue's metrics (U7)


@dataclass(frozen=True)
class Offsets:
    source: str
    count: int
    median: float
    low: int
    high: int


@dataclass(frozen=True)
class Pointer:
    """An assumption the differences point at, and why."""

    assumption: notes.Assumption
    why: str


@dataclass(frozen=True)
class Calibration:
    monitors: tuple[Checked, ...]
    not_live: tuple[str, ...]  # monitors replayed that Datadog has no monitor of this definitions set for
    events: int  # monitor alert events read for the period

    @property
    def matched(self) -> int:
        return sum(len(c.matched) for c in self.monitors)

    @property
    def missed(self) -> int:
        return sum(len(c.missed) for c in self.monitors)

    @property
    def extra(self) -> int:
        return sum(len(c.extra) for c in self.monitors)

    @property
    def agreement(self) -> float | None:
        """matched / (matched + missed + extra); None where neither side has a transition."""
        total = self.matched + self.missed + self.extra
        return None if total == 0 else self.matched / total

    @property
    def offsets(self) -> tuple[Offsets, ...]:
        return tuple(
            summary
            for source in ("crawler", "streams", COMPOSITE)
            if (summary := offsets(source, [m.offset for c in self.monitors if c.source == source for m in c.matched]))
        )

    @property
    def pointers(self) -> tuple[Pointer, ...]:
        return pointers(self.monitors)


def offsets(source: str, found: Sequence[int]) -> Offsets | None:
    if not found:
        return None
    return Offsets(source, len(found), float(median(found)), min(found), max(found))


def match(
    model: Sequence[Transition], real: Sequence[Transition], tolerance: int = MATCH_MINUTES
) -> tuple[tuple[Matched, ...], tuple[Transition, ...], tuple[Transition, ...]]:
    """(matched, missed, extra): for each state entered, the two sides' transitions into it paired in order, each
    with the first of the other side's within `tolerance` minutes; one left without a twin is missed (real) or
    extra (the model's)."""
    matched: list[Matched] = []
    missed: list[Transition] = []
    extra: list[Transition] = []
    for state in sorted({t.state for t in (*model, *real)}):
        ours = sorted((t for t in model if t.state == state), key=lambda t: t.minute)
        theirs = sorted((t for t in real if t.state == state), key=lambda t: t.minute)
        i = j = 0
        while i < len(ours) and j < len(theirs):
            if abs(theirs[j].minute - ours[i].minute) <= tolerance:
                matched.append(Matched(ours[i], theirs[j]))
                i, j = i + 1, j + 1
            elif theirs[j].minute < ours[i].minute:
                missed.append(theirs[j])
                j += 1
            else:
                extra.append(ours[i])
                i += 1
        extra += ours[i:]
        missed += theirs[j:]
    return (
        tuple(sorted(matched, key=lambda m: (m.model.minute, m.model.state))),
        tuple(sorted(missed, key=lambda t: (t.minute, t.state))),
        tuple(sorted(extra, key=lambda t: (t.minute, t.state))),
    )


def model_transitions(item: Replayed, warmup: int) -> tuple[Transition, ...]:
    """The model's transitions within the period, at the reading shown."""
    return tuple(Transition(t, after, before) for t, before, after in item.run.changes if t >= warmup)


def source_of(body: Mapping[str, object], metrics_source: str) -> str:
    """How the monitor's data reaches Datadog, as `obs test` decides its evaluation delay: the environment's
    metrics source, except that ECS task counts come from the ECS API, polled like the crawler (U24)."""
    if body.get("type") == "composite":
        return COMPOSITE
    query = str(body.get("query") or "")
    return "crawler" if any(name in query for name in TASK_COUNTS) else metrics_source


def calibrate(
    replay: Replay, real: Mapping[str, Sequence[Transition]], metrics_source: str, not_live: Sequence[str], events: int
) -> Calibration:
    """Every replayed monitor Datadog has, its model transitions against the real ones of `real` (by key)."""
    checked = []
    for item in replay.monitors:
        if item.key in not_live:
            continue
        body = replay.setup.monitors[item.key]
        found = match(model_transitions(item, replay.setup.warmup), real.get(item.key, ()))
        query = str(body.get("query") or "")
        checked.append(
            Checked(
                item.key,
                source_of(body, metrics_source),
                *found,
                task_counts=any(name in query for name in TASK_COUNTS),
                sqs="aws.sqs." in query,
            )
        )
    return Calibration(tuple(checked), tuple(sorted(not_live)), events)


def pointers(checked: Sequence[Checked]) -> tuple[Pointer, ...]:
    """The few rules that name an assumption: each reads a pattern only that assumption would explain."""
    found = [*_arrival(checked), *_wake(checked), *_composite(checked), *_no_data(checked)]
    return tuple(sorted(found, key=lambda p: notes.order(p.assumption)))


def _arrival(checked: Sequence[Checked]) -> list[Pointer]:
    """U6: a metric source's transitions consistently later than the latest arrival, or earlier than the earliest:
    its points reach Datadog outside the documented range."""
    out = []
    for source in ("crawler", "streams"):
        found = [m.offset for c in checked if c.source == source for m in c.matched]
        if len(found) < MIN_MATCHED:
            continue
        middle = median(found)
        width = LATEST.delay(source, 1) - ARRIVALS[0].delay(source, 1)
        if middle > SLACK:
            why = f"{source} transitions come a median {middle:g} min after the model's latest arrival"
        elif middle < -(width + SLACK):
            why = f"{source} transitions come a median {-middle:g} min before the model's, earlier than its earliest"
        else:
            continue
        out.append(Pointer(notes.CRAWLER_ARRIVAL, f"{why} ({len(found)} matched)"))
    return out


def _wake(checked: Sequence[Checked]) -> list[Pointer]:
    """U7: on SQS monitors, the transitions out of OK (an incident's onset, often a queue waking from idle) later
    than the rest: a waking queue reports late, a steady lag would delay every transition alike."""
    onsets = [m.offset for c in checked if c.sqs for m in c.matched if m.model.before == OK]
    rest = [m.offset for c in checked if c.sqs for m in c.matched if m.model.before != OK]
    if len(onsets) < MIN_MATCHED or len(rest) < MIN_MATCHED:
        return []
    gap = median(onsets) - median(rest)
    if gap <= SLACK:
        return []
    why = f"SQS monitors leave OK a median {gap:g} min later, against the model, than they make their other transitions"
    return [Pointer(notes.QUEUE_WAKE, why)]


def _composite(checked: Sequence[Checked]) -> list[Pointer]:
    """U17: composites offset from their monitors: the composite's own timing, not its monitors' data."""
    ours = [m.offset for c in checked if c.source == COMPOSITE for m in c.matched]
    others = [m.offset for c in checked if c.source != COMPOSITE for m in c.matched]
    if len(ours) < MIN_MATCHED:
        return []
    gap = median(ours) - (median(others) if others else 0)
    if abs(gap) <= SLACK:
        return []
    return [
        Pointer(notes.COMPOSITE_LAG, f"composites are {gap:+g} min off their monitors' offset ({len(ours)} matched)")
    ]


def _no_data(checked: Sequence[Checked]) -> list[Pointer]:
    """U9 (and U24 where the monitor reads ECS task counts): transitions into or out of NO DATA that only one
    side has: when a monitor counts a missing series as no data is the no-data assumption's to say."""
    odd = [(c, t) for c in checked for t in (*c.missed, *c.extra) if NO_DATA in (t.state, t.before)]
    out = []
    if odd:
        out.append(Pointer(notes.NO_DATA_TIMEFRAME, f"{len(odd)} transitions into or out of NO DATA on one side only"))
    tasks = sum(1 for c, _ in odd if c.task_counts)
    if tasks:
        out.append(Pointer(notes.ECS_API_COUNTS, f"{tasks} of them on monitors of ECS task counts"))
    return out
