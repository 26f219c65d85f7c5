"""Pure: what the scenarios show of each monitor that notifies someone, per metric and queue class. A monitor
no scenario expects to notify has thresholds nothing checks; one no scenario expects to stay quiet may page on
a healthy day unnoticed. Only a whole run of the scenarios says this: one scenario shows little."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from sync.core.evaluation.expect import Expectation
from sync.core.evaluation.simulate import Result
from sync.core.keys import Key
from sync.core.paging import routes

# An expectation that names the monitor alone (not `any`, not a list) and wants it to notify in time.
_NOTIFIES = frozenset({"pages_within", "alerts_within"})
# One that wants it quiet; `any` and lists count, as a healthy day is quiet on every monitor at once.
_QUIET = frozenset({"notifies_none", "alerts_never", "warns_chat_only", "chat_only"})


@dataclass(frozen=True)
class Coverage:
    never_notifying: tuple[str, ...]  # `metric (class)` of monitors no scenario expects to notify
    never_quiet: tuple[str, ...]  # ... and to stay quiet


def of(results: Sequence[tuple[str, Result]], classes: Mapping[str, str]) -> Coverage:
    """`classes`: each queue's class, by the queue's name in the environment its keys carry."""
    notifying: set[str] = set()
    unmodelled: set[str] = set()  # said apart (left out of `any`): the model cannot show them either way
    shown: set[str] = set()
    quiet: set[str] = set()
    for _, result in results:
        unmodelled.update(_label(key, classes) for key, _ in result.left_out)
        notifying.update(
            _label(key, classes) for key, body in result.case.monitors.items() if routes(str(body.get("message", "")))
        )
        for verdict in result.verdicts:
            expectation = verdict.expectation
            if expectation.kind in _NOTIFIES and not expectation.may_leave_out:
                shown.update(_label(k, classes) for k in expectation.keys)
            if _is_quiet(expectation):
                quiet.update(_label(k, classes) for k in expectation.keys)
    notifying -= unmodelled
    return Coverage(tuple(sorted(notifying - shown)), tuple(sorted(notifying - quiet)))


def _is_quiet(expectation: Expectation) -> bool:
    return expectation.kind in _QUIET or (expectation.kind == "pages_count" and not expectation.count)


def _label(key: str, classes: Mapping[str, str]) -> str:
    """`metric (class)` of a queue's monitor; an SLO's burn-rate alert is `slo-<name>` of its queue's class."""
    parsed = Key.of(key)
    queue = parsed.queue or ""
    return f"{parsed.metric} ({classes.get(queue, queue)})"


def lines(coverage: Coverage) -> list[str]:
    out = []
    if coverage.never_notifying:
        out.append("no scenario expects these to notify: " + ", ".join(coverage.never_notifying))
    if coverage.never_quiet:
        out.append("no scenario expects these to stay quiet: " + ", ".join(coverage.never_quiet))
    return out


def as_json(coverage: Coverage) -> dict[str, list[str]]:
    return {"never_notifying": list(coverage.never_notifying), "never_quiet": list(coverage.never_quiet)}
