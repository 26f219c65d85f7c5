"""Pure: what a replay means to the people on call: per monitor its alerts, pages, notifications, minutes in
ALERT, flaps and longest alert; the incidents (a queue's pages close in time, one incident); per audience what
reached it."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from sync.core.backtest.replay import Replay, Replayed
from sync.core.evaluation.states import ALERT

FLAP_MINUTES = 60  # an alert that begins within this long of the monitor's last recovery is a flap
INCIDENT_GAP = 60  # pages of one queue closer than this belong to one incident


@dataclass(frozen=True)
class Stats:
    key: str
    queue: str | None
    alerts: int
    pages: int
    pages_range: tuple[int, int]  # the fewest and most pages over the arrival readings
    notifications: int
    alert_minutes: int
    flaps: int
    longest: tuple[int, int] | None  # (first minute, minutes) of the longest alert


@dataclass(frozen=True)
class Incident:
    queue: str
    start: int
    end: int
    pages: int
    monitors: tuple[str, ...]


def stats(replay: Replay, item: Replayed) -> Stats:
    spans = _alert_spans(item, replay.setup.warmup, replay.setup.duration)
    recoveries = [end for _, end in spans]
    flaps = sum(1 for i, (start, _) in enumerate(spans) if i and start - recoveries[i - 1] <= FLAP_MINUTES)
    longest = max(spans, key=lambda s: (s[1] - s[0], -s[0]), default=None)
    pages = [n for n in item.sent if replay.paged(n)]
    return Stats(
        key=item.key,
        queue=item.queue,
        alerts=len(spans),
        pages=len(pages),
        pages_range=(min(item.pages.values(), default=0), max(item.pages.values(), default=0)),
        notifications=len(item.sent),
        alert_minutes=sum(end - start for start, end in spans),
        flaps=flaps,
        longest=None if longest is None else (longest[0], longest[1] - longest[0]),
    )


def _alert_spans(item: Replayed, warmup: int, duration: int) -> list[tuple[int, int]]:
    """[start, end) of each stretch in ALERT within the period (one still open ends with the period)."""
    spans: list[tuple[int, int]] = []
    began: int | None = warmup if item.run.state_at(warmup) == ALERT else None
    for t, _, after in item.run.changes:
        if t < warmup:
            continue
        if after == ALERT and began is None:
            began = t
        elif after != ALERT and began is not None:
            spans.append((began, t))
            began = None
    if began is not None:
        spans.append((began, duration + 1))
    return spans


def incidents(replay: Replay) -> tuple[Incident, ...]:
    """A queue's pages grouped: each within INCIDENT_GAP minutes of the one before is the same incident."""
    by_queue: dict[str, list[tuple[int, str]]] = {}
    for item in replay.monitors:
        for n in item.sent:
            if replay.paged(n):
                by_queue.setdefault(item.queue or "(no queue)", []).append((n.t, item.key))
    out: list[Incident] = []
    for queue, pages in sorted(by_queue.items()):
        out += _grouped(queue, sorted(pages))
    return tuple(sorted(out, key=lambda i: (i.start, i.queue)))


def _grouped(queue: str, pages: Sequence[tuple[int, str]]) -> list[Incident]:
    groups: list[list[tuple[int, str]]] = []
    for page in pages:
        if groups and page[0] - groups[-1][-1][0] <= INCIDENT_GAP:
            groups[-1].append(page)
        else:
            groups.append([page])
    return [Incident(queue, g[0][0], g[-1][0], len(g), tuple(sorted({key for _, key in g}))) for g in groups]


@dataclass(frozen=True)
class Heard:
    """What one audience received: notifications, and for the page audience the pages and incidents."""

    audience: str
    handles: tuple[str, ...]
    notifications: int
    pages: int


def audiences(replay: Replay) -> tuple[Heard, ...]:
    audience = replay.setup.audience
    sent = [n for item in replay.monitors for n in item.sent]
    out = []
    for name, handles in (("page", audience.page), ("chat", audience.chat)):
        reached = [n for n in sent if n.targets & handles]
        pages = sum(replay.paged(n) for n in reached) if name == "page" else 0
        out.append(Heard(name, tuple(sorted(handles)), len(reached), pages))
    return tuple(out)
