"""Pure: every monitor, composite and burn-rate alert of an environment run over fetched history, minute by minute,
with the model `obs test` uses, at every reading of the arrival range; the window end open (U1's pessimistic
reading), as `obs test` reports pager load."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from sync.core.backtest.readings import Reading
from sync.core.backtest.reads import Reads, reads
from sync.core.evaluation import composite, monitor, notes, slo
from sync.core.evaluation.audience import Audience
from sync.core.evaluation.feed import FeedCache
from sync.core.evaluation.notes import Refused
from sync.core.evaluation.notify import MuteWindow, Notification, notifications
from sync.core.evaluation.series import Series, matching
from sync.core.evaluation.states import Run
from sync.core.metric_query import Leaf


@dataclass(frozen=True)
class Setup:
    """What the replay needs of the environment, placed on the replay's minutes (0: the first fetched)."""

    monitors: Mapping[str, Mapping[str, Any]]  # key -> API body
    queues: Mapping[str, str | None]  # key -> its queue
    audience: Audience
    duration: int  # the last minute evaluated
    slos: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    mutes: tuple[MuteWindow, ...] = ()
    corrections: Mapping[str, tuple[tuple[int, int], ...]] = field(default_factory=dict)
    warmup: int = 0  # minutes before the period, fetched so the first windows are full: nothing sent is counted
    unread: Mapping[str, str] = field(default_factory=dict)  # key -> why its series could not be fetched


@dataclass(frozen=True)
class Replayed:
    key: str
    queue: str | None
    run: Run  # at the reading shown (the latest arrival)
    sent: tuple[Notification, ...]  # unmuted, reaching someone, within the period
    pages: Mapping[str, int]  # reading -> pages
    # reading -> the run and what it sent there: what a recorded scenario's bounds must hold under
    readings: Mapping[str, tuple[Run, tuple[Notification, ...]]] = field(default_factory=dict)


@dataclass(frozen=True)
class Replay:
    setup: Setup
    monitors: tuple[Replayed, ...]
    not_backtested: tuple[tuple[str, str], ...]  # (key, why)
    readings: tuple[str, ...]
    assumptions: tuple[notes.Assumption, ...]

    def paged(self, n: Notification) -> bool:
        return self.setup.audience.paged(n)


def replay(setup: Setup, readings: Sequence[Reading], used: set[notes.Assumption]) -> Replay:
    used |= {notes.WINDOW_EDGES, notes.NO_BACKFILL}
    found: dict[str, dict[str, tuple[Run, tuple[Notification, ...]]]] = {}
    refused: dict[str, str] = {}
    shared = _Shared()
    for reading in readings:
        runner = _Runner(setup, reading.series, used, shared)
        found[reading.name] = {}
        for key in sorted(setup.monitors):
            why = refused.get(key) or runner.unusable(key)
            if why:
                refused[key] = why
                continue
            try:
                run = runner.run(key)
            except Refused as exc:
                refused[key] = f"the model cannot evaluate it: {exc}"
                continue
            found[reading.name][key] = (run, runner.sent(run, key))
    shown = readings[0].name
    out = []
    for key in sorted(k for k in setup.monitors if k not in refused):
        run, sent = found[shown][key]
        pages = {name: sum(setup.audience.paged(n) for n in runs[key][1]) for name, runs in found.items()}
        every = {name: runs[key] for name, runs in found.items()}
        out.append(Replayed(key, setup.queues.get(key), run, sent, pages, every))
    return Replay(
        setup,
        tuple(out),
        tuple(sorted(refused.items())),
        tuple(r.name for r in readings),
        tuple(sorted(used, key=notes.order)),
    )


@dataclass
class _Shared:
    """Runs and notifications worked out once per monitor and the series objects it reads, across readings:
    readings that differ only in series a monitor does not read share its run."""

    runs: dict[tuple[object, ...], Run] = field(default_factory=dict)
    sent: dict[int, tuple[Notification, ...]] = field(default_factory=dict)
    reads: dict[str, Reads] = field(default_factory=dict)
    feeds: FeedCache = field(default_factory=dict)  # the readings' series live as long as the replay
    verdicts: slo.Verdicts = field(default_factory=dict)  # known by those feeds: as long too
    lateness: dict[int, int] = field(default_factory=dict)  # id(series) -> monitor.lateness


class _Runner:
    """One reading's runs."""

    def __init__(self, setup: Setup, series: tuple[Series, ...], used: set[notes.Assumption], shared: _Shared) -> None:
        self._setup, self._series, self._used, self._shared = setup, series, used, shared
        self._runs: dict[str, Run] = {}
        self._reads = shared.reads

    def _read(self, key: str) -> Reads:
        if key not in self._reads:
            self._reads[key] = reads(self._setup.monitors[key], self._setup.slos)
        return self._reads[key]

    def unusable(self, key: str) -> str:
        """Why the monitor cannot be backtested on this history, or ""."""
        if key in self._setup.unread:
            return self._setup.unread[key]
        found = self._read(key)
        if found.problem:
            return found.problem
        for ref in found.monitors:
            if ref not in self._setup.monitors:
                return f"it combines {ref}, which this environment does not have"
            why = self.unusable(ref)
            if why:
                return f"it combines {ref}, which is not backtested ({why})"
        empty = sorted(
            {
                metric
                for metric, tags in found.filters
                if not any(s.points for s in matching(self._series, _leaf(metric, tags)))
            }
        )
        if empty:
            return f"no data for the period: {', '.join(empty)}"
        return ""

    def run(self, key: str) -> Run:
        if key not in self._runs:
            found = self._read(key)
            if found.monitors:
                ids = tuple(id(self.run(ref)) for ref in found.monitors)
            else:
                metrics = {metric for metric, _ in found.filters}
                mine = [s for s in self._series if s.metric in metrics]
                # A run that sees every point it reads is the same at every arrival: known by its points alone.
                ids = tuple(id(s.points) if self._blind(key, mine) else id(s) for s in mine)
            memo = (key, *ids)
            if memo not in self._shared.runs:
                self._shared.runs[memo] = self._evaluate(key)
            self._runs[key] = self._shared.runs[memo]
        return self._runs[key]

    def _blind(self, key: str, series: Sequence[Series]) -> bool:
        body = self._setup.monitors[key]
        if body.get("type") not in ("metric alert", "query alert"):
            return False
        try:
            return monitor.arrival_blind(monitor.settings(body, self._used), series, True, self._late)
        except Refused:
            return False  # evaluating it says why

    def _late(self, series: Series) -> int:
        lateness = self._shared.lateness
        if id(series) not in lateness:
            lateness[id(series)] = monitor.lateness(series)
        return lateness[id(series)]

    def sent(self, run: Run, key: str) -> tuple[Notification, ...]:
        setup = self._setup
        if id(run) not in self._shared.sent:
            every = notifications(run, setup.monitors[key], setup.mutes, setup.duration, self._used)
            self._shared.sent[id(run)] = tuple(n for n in every if n.t >= setup.warmup and not n.muted and n.targets)
        return self._shared.sent[id(run)]

    def _evaluate(self, key: str) -> Run:
        setup, used = self._setup, self._used
        body = setup.monitors[key]
        if body.get("type") == "slo alert":
            shared = self._shared
            return slo.run(
                key, body, setup.slos, self._series, setup.duration, used, setup.corrections,
                cache=shared.feeds, verdicts=shared.verdicts,
            )  # fmt: skip
        if body.get("type") != "composite":
            return monitor.run(key, body, self._series, setup.duration, True, used, cache=self._shared.feeds)
        constituents = {ref: self.run(ref) for ref in self._read(key).monitors}
        return composite.run(key, body, constituents, setup.duration, used)


def _leaf(metric: str, tags: tuple[tuple[str, str], ...]) -> Leaf:
    return Leaf("avg", metric, tags, "")
