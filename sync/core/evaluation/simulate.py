"""Pure: one scenario in one environment, run under every reading of the undocumented window edges (U1)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from sync.core import composite_query
from sync.core.evaluation import composite, monitor, notes, slo
from sync.core.evaluation.expect import Audience, Check, Expectation, check
from sync.core.evaluation.notes import Refused, Unmodelled
from sync.core.evaluation.notify import MuteWindow, Notification, notifications
from sync.core.evaluation.series import Series
from sync.core.evaluation.states import Run

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
    slos: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)  # key -> SLO body, for burn-rate alerts
    # SLO key -> the minutes its corrections cover (planned maintenance): slices there count as good.
    corrections: Mapping[str, tuple[tuple[int, int], ...]] = field(default_factory=dict)


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


@dataclass(frozen=True)
class Result:
    case: Case
    verdicts: tuple[Verdict, ...]
    runs: Mapping[str, Mapping[str, Run]]  # reading -> key -> run
    sent: Mapping[str, Mapping[str, tuple[Notification, ...]]]
    assumptions: tuple[notes.Assumption, ...] = field(default=())

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
    for reading, open_end in READINGS:
        runs[reading] = {}
        sent[reading] = {}
        for key in sorted(needed):
            try:
                run = _run(case, key, open_end, used, runs[reading])
            except Refused as exc:
                refused[key] = exc
                continue
            runs[reading][key] = run
            sent[reading][key] = notifications(run, case.monitors[key], case.mutes, case.duration, used)
    verdicts = tuple(_verdict(case, e, runs, sent, refused) for e in case.expectations)
    return Result(case, verdicts, runs, sent, tuple(sorted(used, key=notes.order)))


def _run(case: Case, key: str, open_end: bool, used: set[notes.Assumption], done: dict[str, Run]) -> Run:
    body = case.monitors[key]
    if body.get("type") == "slo alert":
        return slo.run(key, body, case.slos, case.series, case.duration, used, case.corrections)
    if body.get("type") != "composite":
        return monitor.run(key, body, case.series, case.duration, open_end, used)
    constituents = {}
    for ref in composite_query.references(composite.parse(str(body.get("query", "")))):
        if ref not in case.monitors:
            raise Refused(f"the composite refers to {ref}, which this environment does not have")
        if case.monitors[ref].get("type") == "composite":
            raise Refused("a composite cannot be based on another composite")
        constituents[ref] = done.get(ref) or monitor.run(
            ref, case.monitors[ref], case.series, case.duration, open_end, used
        )
    return composite.run(key, body, constituents, case.duration, used)


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
        for reading, _ in READINGS
    }
    failed = next((reading for reading, c in checks.items() if not c.passed), "")
    detail = checks[failed or READINGS[0][0]].detail
    return Verdict(expectation, not failed, detail, checks, failed_reading=failed, left_out=left_out)
