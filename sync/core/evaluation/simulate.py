"""Pure: one scenario in one environment, run under every reading of the undocumented window edges (U1) and at
every point of the documented arrival range (U6, U7, U5)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from sync.core import composite_query
from sync.core.evaluation import composite, monitor, notes, slo
from sync.core.evaluation.audience import Audience
from sync.core.evaluation.expect import Check, Expectation, check
from sync.core.evaluation.feed import FeedCache
from sync.core.evaluation.notes import Refused, Unmodelled
from sync.core.evaluation.notify import MuteWindow, Notification, notifications
from sync.core.evaluation.series import LATEST, Series
from sync.core.evaluation.states import FRESH, Run, Start

# U1: the end of the window open (the pessimistic reading: a point counts a minute later) and closed.
READINGS = (("window end open", True), ("window end closed", False))


@dataclass(frozen=True)
class Case:
    scenario: str
    env: str
    incident_at: int
    duration: int
    series: tuple[Series, ...]
    monitors: Mapping[str, Mapping[str, Any]]  # key -> API body, every monitor the environment has
    expectations: tuple[Expectation, ...]
    audience: Audience
    mutes: tuple[MuteWindow, ...] = ()
    assumptions: tuple[notes.Assumption, ...] = ()  # made while building the series
    settled: tuple[notes.Assumption, ...] = ()  # facts the environment declares: not assumed, whatever reads them
    slos: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)  # key -> SLO body, for burn-rate alerts
    # SLO key -> the minutes its corrections cover (planned maintenance): slices there count as good.
    corrections: Mapping[str, tuple[tuple[int, int], ...]] = field(default_factory=dict)
    # (arrival reading, its series): the same datapoints as they arrive at each point of the documented range;
    # empty: `series` is the only reading.
    arrivals: tuple[tuple[str, tuple[Series, ...]], ...] = ()
    load_keys: tuple[str, ...] = ()  # every monitor of the queue and its topics: whose notifications make pager load
    start: Mapping[str, Start] = field(default_factory=dict)  # key -> its state at minute 0, when not OK

    def readings(self) -> tuple[tuple[str, bool, tuple[Series, ...]], ...]:
        """(name, window end open, series): every combination an expectation must hold under."""
        arrived = self.arrivals or (("", self.series),)
        return tuple(
            (f"{edge}, {name}" if name else edge, open_end, series)
            for edge, open_end in READINGS
            for name, series in arrived
        )


@dataclass(frozen=True)
class Verdict:
    expectation: Expectation
    passed: bool
    detail: str
    checks: Mapping[str, Check]  # per reading
    refused: str = ""  # why the model could not evaluate it
    failed_reading: str = ""
    left_out: tuple[tuple[str, str], ...] = ()  # (key, why): monitors of `any` or a list the model cannot evaluate

    def latest(self, field_name: str) -> int | None:
        """The later of the readings' first events (a page or recovery counts at its later reading)."""
        values = [getattr(c.observed, field_name) for c in self.checks.values()]
        return None if not values or any(v is None for v in values) else max(v for v in values if v is not None)

    def earliest(self, field_name: str) -> int | None:
        """The sooner of the readings' first events: the soonest the data allows (None when no reading has one)."""
        values = [v for c in self.checks.values() if (v := getattr(c.observed, field_name)) is not None]
        return min(values) if values else None


@dataclass(frozen=True)
class Load:
    """What the whole queue's monitors send over the scenario at the latest arrival: pages and notifications."""

    pages: int
    notifications: int
    minutes: int


@dataclass(frozen=True)
class Result:
    case: Case
    verdicts: tuple[Verdict, ...]
    runs: Mapping[str, Mapping[str, Run]]  # reading -> key -> run
    sent: Mapping[str, Mapping[str, tuple[Notification, ...]]]
    assumptions: tuple[notes.Assumption, ...] = field(default=())
    load: Load | None = None

    @property
    def passed(self) -> bool:
        return all(v.passed for v in self.verdicts)

    @property
    def left_out(self) -> tuple[tuple[str, str], ...]:
        """Every monitor some expectation left out, once, in key order."""
        return tuple(sorted({item for v in self.verdicts for item in v.left_out}))


def simulate(case: Case) -> Result:
    used: set[notes.Assumption] = {notes.WINDOW_EDGES, notes.NO_BACKFILL, *case.assumptions}
    needed = {key for e in case.expectations for key in e.keys}
    runs: dict[str, dict[str, Run]] = {}
    sent: dict[str, dict[str, tuple[Notification, ...]]] = {}
    refused: dict[str, Refused] = {}
    # A run depends only on the series its query reads: readings that differ elsewhere share it.
    shared = _Shared(case, used)
    for reading, open_end, series in case.readings():
        runs[reading] = {}
        sent[reading] = {}
        for key in sorted(needed):
            try:
                run = shared.run(key, open_end, series)
            except Refused as exc:
                refused[key] = exc
                continue
            runs[reading][key] = run
            sent[reading][key] = shared.sent(run, key)
    verdicts = tuple(_verdict(case, e, runs, sent, refused) for e in case.expectations)
    load = _load(case, shared) if case.load_keys else None
    return Result(case, verdicts, runs, sent, tuple(sorted(used - set(case.settled), key=notes.order)), load)


def _load(case: Case, shared: _Shared) -> Load:
    """Pager load, under the open window end at the latest arrival (the reading the report shows); a monitor
    the model refuses adds nothing."""
    _, open_end, series = next((r for r in case.readings() if LATEST.name in r[0]), case.readings()[0])
    paged: list[tuple[int, str]] = []
    closes: list[tuple[int, str]] = []
    notified = 0
    for key in case.load_keys:
        try:
            sent = shared.sent(shared.run(key, open_end, series), key)
        except Refused:
            continue
        paged += [(n.t, key) for n in sent if case.audience.paged(n)]
        closes += [(n.t, key) for n in sent if case.audience.closed(n)]
        notified += sum(not n.muted and bool(n.targets) for n in sent)
    return Load(len(case.audience.opening(paged, closes)), notified, case.duration)


class _Shared:
    """Runs and notifications worked out once per monitor and what it sees of the series."""

    def __init__(self, case: Case, used: set[notes.Assumption]) -> None:
        self._case, self._used = case, used
        self._runs: dict[tuple[object, ...], Run | Refused] = {}
        self._sent: dict[int, tuple[Notification, ...]] = {}
        self._seen: dict[tuple[int, int], int] = {}  # (series, settle) -> what a monitor sees of it, numbered
        self._alike: dict[tuple[object, ...], int] = {}
        self._feeds: FeedCache = {}  # the case's series live as long as it does
        self._verdicts: slo.Verdicts = {}  # and so do the feeds the slices' verdicts are known by

    def run(self, key: str, open_end: bool, series: tuple[Series, ...]) -> Run:
        body = self._case.monitors[key]
        # A burn rate reads whole slices, whatever the reading of a window's end: one run serves both.
        edge = None if body.get("type") == "slo alert" else open_end
        memo = (key, edge, self._reads(body, open_end, series))
        if memo not in self._runs:
            try:
                self._runs[memo] = self._evaluate(key, open_end, series)
            except Refused as exc:
                self._runs[memo] = exc
        found = self._runs[memo]
        if isinstance(found, Refused):
            raise found
        return found

    def _reads(self, body: Mapping[str, Any], open_end: bool, series: tuple[Series, ...]) -> tuple[int, ...]:
        """What a run depends on: the series its query reads, and of those only what it can see. A metric
        monitor's window reaches a point evaluation_delay after its stamp (a minute more with the window end
        open), so a point that arrives by then looks the same at every arrival: readings that differ only
        there share the run."""
        if body.get("type") not in ("metric alert", "query alert"):
            return tuple(id(s) for s in series)  # SLO alerts and composites: every series, as they are
        text = str(body.get("query", ""))
        try:
            settle = monitor.delay_minutes(body.get("options") or {}) + open_end
        except (TypeError, ValueError):
            return tuple(id(s) for s in series if s.metric in text)  # the run refuses it
        return tuple(self._seen_as(s, settle) for s in series if s.metric in text)

    def _seen_as(self, s: Series, settle: int) -> int:
        if (id(s), settle) not in self._seen:
            late = tuple((m, a) for m, a in sorted(s.arrival.items()) if a > m + settle)
            alike = (s.metric, tuple(sorted(s.tags.items())), tuple(s.points.items()), late)
            self._seen[(id(s), settle)] = self._alike.setdefault(alike, len(self._alike))
        return self._seen[(id(s), settle)]

    def sent(self, run: Run, key: str) -> tuple[Notification, ...]:
        case = self._case
        if id(run) not in self._sent:
            self._sent[id(run)] = notifications(run, case.monitors[key], case.mutes, case.duration, self._used)
        return self._sent[id(run)]

    def _evaluate(self, key: str, open_end: bool, series: tuple[Series, ...]) -> Run:
        case, used = self._case, self._used
        body = case.monitors[key]
        start = case.start.get(key)
        if body.get("type") == "slo alert":
            return slo.run(
                key, body, case.slos, series, case.duration, used, case.corrections, start or FRESH,
                cache=self._feeds, verdicts=self._verdicts,
            )  # fmt: skip
        if body.get("type") != "composite":
            return monitor.run(key, body, series, case.duration, open_end, used, start or FRESH, self._feeds)
        constituents = {}
        for ref in composite_query.references(composite.parse(str(body.get("query", "")))):
            if ref not in case.monitors:
                raise Refused(f"the composite refers to {ref}, which this environment does not have")
            if case.monitors[ref].get("type") == "composite":
                raise Refused("a composite cannot be based on another composite")
            constituents[ref] = self.run(ref, open_end, series)
        return composite.run(key, body, constituents, case.duration, used, start)


def _verdict(
    case: Case,
    expectation: Expectation,
    runs: Mapping[str, Mapping[str, Run]],
    sent: Mapping[str, Mapping[str, Sequence[Notification]]],
    refused: Mapping[str, Refused],
) -> Verdict:
    left_out = tuple(
        (key, str(refused[key]))
        for key in expectation.keys
        if expectation.may_leave_out and isinstance(refused.get(key), Unmodelled)
    )
    if left_out:
        kept = tuple(key for key in expectation.keys if key not in dict(left_out))
        if not kept:
            why = "; ".join(f"{key}: {reason}" for key, reason in left_out)
            return Verdict(expectation, False, "cannot evaluate", {}, refused=f"no monitor left to evaluate ({why})")
        expectation = replace(expectation, keys=kept)
    blocked = [f"{key}: {refused[key]}" for key in expectation.keys if key in refused]
    if blocked:
        return Verdict(expectation, False, "cannot evaluate", {}, refused="; ".join(blocked), left_out=left_out)
    checks = {
        reading: check(expectation, runs[reading], sent[reading], case.audience, case.incident_at)
        for reading, _, _ in case.readings()
    }
    failed = next((reading for reading, c in checks.items() if not c.passed), "")
    # Passing, the latest arrival under the open window end tells the latest minute Datadog can be relied on.
    shown = next((reading for reading in checks if LATEST.name in reading), next(iter(checks)))
    detail = checks[failed or shown].detail
    return Verdict(expectation, not failed, detail, checks, failed_reading=failed, left_out=left_out)
