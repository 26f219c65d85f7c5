"""Pure: what an on-call engineer expects of a scenario, checked against the monitors' runs."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from sync.core.evaluation.audience import Audience
from sync.core.evaluation.notify import Notification
from sync.core.evaluation.states import ALERT, ALERT_WORTHY, NO_DATA, OK, WARN, Run

KINDS = (
    "pages_within",  # the first page after the incident (or after `after`) comes within `within` minutes
    "pages_count",  # exactly `count` pages (renotifications count, unless the incident is still open)
    "notifies_none",  # nobody is notified at all
    "warns_chat_only",  # a warning reaches chat, and nothing pages
    "recovers_within",  # back to OK within `within` minutes of `after`
    "no_data_alert_never",  # no notified NO DATA
    "alerts_within",  # ALERT within `within` minutes, whoever hears of it
    "alerts_never",  # never ALERT
    "pages_at_most",  # no more than `count` pages
    "pages_not_before",  # no page before minute `after`
    "chat_only",  # an alert or warning reaches chat, and nothing pages
    "one_incident",  # it pages, and each page audience at most `count` times: one incident, one page
)


@dataclass(frozen=True)
class Expectation:
    label: str  # the monitor as the scenario names it
    keys: tuple[str, ...]  # the monitors it stands for in this environment
    kind: str
    within: int | None = None
    after: int | None = None
    count: int | None = None
    # `any` or a list: a monitor the model cannot evaluate by design (a forecast) is left out, with a note.
    may_leave_out: bool = False

    def describe(self) -> str:
        what = {
            "pages_within": f"pages within {self.within} min"
            + (f" of minute {self.after}" if self.after is not None else ""),
            "pages_count": f"pages {self.count} time{'s' * (self.count != 1)}" if self.count else "never pages",
            "notifies_none": "notifies no one",
            "warns_chat_only": "warns chat, pages no one",
            "recovers_within": f"recovers within {self.within} min of minute {self.after}",
            "no_data_alert_never": "never alerts on no data",
            "alerts_within": f"alerts within {self.within} min"
            + (f" of minute {self.after}" if self.after is not None else ""),
            "alerts_never": "never alerts",
            "pages_at_most": f"pages at most {self.count} time{'s' * (self.count != 1)}",
            "pages_not_before": f"pages no one before minute {self.after}",
            "chat_only": "reaches chat only",
            "one_incident": "one incident, "
            + ("one page per audience" if self.count == 1 else f"at most {self.count} pages per audience"),
        }[self.kind]
        return f"{self.label}: {what}"


@dataclass(frozen=True)
class Observed:
    """The first of each event at or after the incident (a page or a recovery: after `after` when the
    expectation gives one), across the monitors."""

    alert: int | None
    page: int | None
    warning: int | None
    recovery: int | None
    pages: int


@dataclass(frozen=True)
class Check:
    passed: bool
    detail: str
    observed: Observed
    decisive: int | None  # the minute that decided it, for the explanation
    key: str | None  # the monitor whose evaluations explain it


def check(
    expectation: Expectation,
    runs: Mapping[str, Run],
    sent: Mapping[str, Sequence[Notification]],
    audience: Audience,
    incident_at: int,
) -> Check:
    keys = expectation.keys
    kind = expectation.kind
    after = expectation.after if expectation.after is not None else incident_at
    pages = [(n.t, key) for key in keys for n in sent[key] if audience.paged(n)]
    alerts = _transitions(runs, keys, lambda before, now: now == ALERT)
    warnings = _transitions(runs, keys, lambda before, now: now == WARN)
    recoveries = _transitions(runs, keys, lambda before, now: now == OK and before in ALERT_WORTHY)
    observed = Observed(
        alert=_first(alerts, after if kind == "alerts_within" else incident_at),
        # A later incident of the same scenario (a second failure hours on) is counted from its own minute.
        page=_first(pages, after if kind == "pages_within" else incident_at),
        warning=_first(warnings, incident_at),
        recovery=_first(recoveries, after),
        pages=len(pages),
    )
    first_key = keys[0] if keys else None
    if kind in _MORE:
        return _MORE[kind](_Seen(expectation, sent, audience, pages, observed, first_key))
    if kind == "pages_within":
        return _in_time("page", observed.page, pages, after, expectation, observed, first_key)
    if kind == "pages_count":
        return _counted(expectation, pages, observed, first_key)
    if kind == "recovers_within":
        return _in_time("recovery", observed.recovery, recoveries, after, expectation, observed, first_key)
    if kind == "no_data_alert_never":
        no_data = sorted(
            (t, key) for key in keys for t, _, now in runs[key].changes if now == NO_DATA and runs[key].notify_no_data
        )
        detail = "no NO DATA alert" if not no_data else f"NO DATA alert at minute {no_data[0][0]}"
        return Check(
            not no_data, detail, observed, no_data[0][0] if no_data else None, no_data[0][1] if no_data else first_key
        )
    if kind == "alerts_within":
        assert expectation.within is not None
        deadline = after + expectation.within
        hit = observed.alert
        return Check(
            hit is not None and hit <= deadline,
            _late("alert", hit, after, deadline),
            observed,
            hit or deadline,
            _key(alerts, hit) or first_key,
        )
    every = sorted(alerts)
    detail = "never alerted" if not every else f"alerted at minute {every[0][0]}"
    return Check(not every, detail, observed, every[0][0] if every else None, every[0][1] if every else first_key)


@dataclass(frozen=True)
class _Seen:
    """What every check of an expectation reads: the notifications sent, who is paged, and what was observed."""

    expectation: Expectation
    sent: Mapping[str, Sequence[Notification]]
    audience: Audience
    pages: list[tuple[int, str]]
    observed: Observed
    key: str | None  # the monitor that explains the verdict when nothing else does


def _counted(expectation: Expectation, pages: list[tuple[int, str]], observed: Observed, key: str | None) -> Check:
    count = len(pages)
    detail = f"paged {count} time{'s' * (count != 1)} (minutes: {_minutes(expectation, pages)})"
    decisive = sorted(pages)[-1][0] if pages else None
    return Check(count == expectation.count, detail, observed, decisive, sorted(pages)[-1][1] if pages else key)


def _minutes(expectation: Expectation, pages: list[tuple[int, str]]) -> str:
    """The minutes of the pages; for several monitors (`any`, a list), which monitor paged at each."""
    if len(expectation.keys) < 2:
        return ", ".join(str(t) for t, _ in sorted(pages)) or "none"
    return ", ".join(f"{t} by {key.split('/', 1)[-1]}" for t, key in sorted(pages)) or "none"


def _notifies_none(seen: _Seen) -> Check:
    expectation, sent, observed, key = seen.expectation, seen.sent, seen.observed, seen.key
    noise = sorted((n.t, k) for k in expectation.keys for n in sent[k] if not n.muted and n.targets)
    detail = "notified no one" if not noise else f"notified {_who(sent, noise[0])} at minute {noise[0][0]}"
    return Check(not noise, detail, observed, noise[0][0] if noise else None, noise[0][1] if noise else key)


def _at_most(seen: _Seen) -> Check:
    expectation, pages, observed, key = seen.expectation, seen.pages, seen.observed, seen.key
    assert expectation.count is not None
    counted = _counted(expectation, pages, observed, key)
    return Check(len(pages) <= expectation.count, counted.detail, observed, counted.decisive, counted.key)


def _not_before(seen: _Seen) -> Check:
    expectation, pages, observed, key = seen.expectation, seen.pages, seen.observed, seen.key
    assert expectation.after is not None
    early = sorted(p for p in pages if p[0] < expectation.after)
    if early:
        return Check(False, f"paged at minute {early[0][0]} by {early[0][1].split('/', 1)[-1]}", observed, *early[0])
    return Check(True, f"no page before minute {expectation.after}", observed, None, key)


def _chat_only(seen: _Seen) -> Check:
    chat = sorted(
        (n.t, k)
        for k in seen.expectation.keys
        for n in seen.sent[k]
        if not n.muted and n.kind in ("alert", "warning") and n.targets & seen.audience.chat
    )
    if seen.pages:
        return Check(False, f"paged at minute {seen.pages[0][0]}", seen.observed, *sorted(seen.pages)[0])
    if not chat:
        return Check(False, "never reached chat", seen.observed, None, seen.key)
    return Check(True, f"reached chat at minute {chat[0][0]}, paged no one", seen.observed, *chat[0])


def _one_incident(seen: _Seen) -> Check:
    """Every page of the monitors named, per handle of the page audience: on call hears of the incident, once."""
    assert seen.expectation.count is not None
    if not seen.pages:
        return Check(False, "paged no one", seen.observed, None, seen.key)
    heard: dict[str, list[tuple[int, str]]] = {}
    closes: dict[str, list[tuple[int, str]]] = {}
    for k in seen.expectation.keys:
        for n in seen.sent[k]:
            into = heard if seen.audience.paged(n) else closes if seen.audience.closed(n) else None
            if into is None:
                continue
            for handle in sorted(n.targets & seen.audience.page):
                into.setdefault(handle, []).append((n.t, k))
    opened = {handle: seen.audience.opening(found, closes.get(handle, ())) for handle, found in heard.items()}
    worst = max(sorted(opened), key=lambda handle: len(opened[handle]))
    most = opened[worst]
    detail = f"paged {worst} {len(most)} time{'s' * (len(most) != 1)} (minutes: {_minutes(seen.expectation, most)})"
    if joined := len(heard[worst]) - len(most):
        detail += (
            f"; {joined} more alert{'s' * (joined != 1)} joined (grouped within {seen.audience.group_minutes} min)"
        )
    return Check(len(most) <= seen.expectation.count, detail, seen.observed, most[-1][0], most[-1][1])


def _warns_chat_only(seen: _Seen) -> Check:
    chat = sorted(
        (n.t, key)
        for key in seen.expectation.keys
        for n in seen.sent[key]
        if not n.muted and n.kind == "warning" and n.targets & seen.audience.chat
    )
    if seen.pages:
        return Check(False, f"paged at minute {seen.pages[0][0]}", seen.observed, seen.pages[0][0], seen.pages[0][1])
    if not chat:
        return Check(False, "never warned chat", seen.observed, None, seen.key)
    return Check(True, f"warned chat at minute {chat[0][0]}, paged no one", seen.observed, chat[0][0], chat[0][1])


_MORE: dict[str, Callable[[_Seen], Check]] = {
    "notifies_none": _notifies_none,
    "pages_at_most": _at_most,
    "pages_not_before": _not_before,
    "chat_only": _chat_only,
    "warns_chat_only": _warns_chat_only,
    "one_incident": _one_incident,
}


def _transitions(
    runs: Mapping[str, Run], keys: Sequence[str], when: Callable[[str, str], bool]
) -> list[tuple[int, str]]:
    return [(t, key) for key in keys for t, before, now in runs[key].changes if when(before, now)]


def _first(events: list[tuple[int, str]], since: int) -> int | None:
    return min((t for t, _ in events if t >= since), default=None)


def _key(events: list[tuple[int, str]], t: int | None) -> str | None:
    return next((key for at, key in sorted(events) if at == t), None)


def _in_time(
    what: str,
    hit: int | None,
    events: list[tuple[int, str]],
    after: int,
    expectation: Expectation,
    observed: Observed,
    first_key: str | None,
) -> Check:
    """A page or recovery expected by `after + within`: the first one, and whether it came in time."""
    assert expectation.within is not None
    deadline = after + expectation.within
    passed = hit is not None and hit <= deadline
    return Check(passed, _late(what, hit, after, deadline), observed, hit or deadline, _key(events, hit) or first_key)


def _late(what: str, hit: int | None, since: int, deadline: int) -> str:
    if hit is None:
        return f"no {what} after minute {since} (expected by minute {deadline})"
    verdict = "in time" if hit <= deadline else f"{hit - deadline} min late"
    return f"first {what} at minute {hit}, {hit - since} min after minute {since} ({verdict}; deadline {deadline})"


def _who(sent: Mapping[str, Sequence[Notification]], event: tuple[int, str]) -> str:
    t, key = event
    targets = next(n.targets for n in sent[key] if n.t == t and not n.muted and n.targets)
    return " ".join(sorted(targets))
