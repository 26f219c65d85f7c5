"""Pure: two replays of the same history (the base revision's monitors and the working tree's) compared by what
paged: the incidents that would no longer page, and the pages that would be new."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from sync.core.backtest.replay import Replay
from sync.core.backtest.summary import INCIDENT_GAP, Incident, incidents


@dataclass(frozen=True)
class Comparison:
    base_pages: int
    head_pages: int
    gone: tuple[Incident, ...]  # base incidents no page of the head's comes near
    new: tuple[Incident, ...]  # head incidents no page of the base's comes near


def pages(replay: Replay) -> int:
    return sum(replay.paged(n) for item in replay.monitors for n in item.sent)


def compare(base: Replay, head: Replay) -> Comparison:
    before, after = incidents(base), incidents(head)
    return Comparison(
        base_pages=pages(base),
        head_pages=pages(head),
        gone=tuple(i for i in before if not _near(i, after)),
        new=tuple(i for i in after if not _near(i, before)),
    )


def _near(incident: Incident, others: Sequence[Incident]) -> bool:
    """Another incident of the same queue overlaps it, give or take the gap that groups pages."""
    return any(
        o.queue == incident.queue and o.start <= incident.end + INCIDENT_GAP and incident.start <= o.end + INCIDENT_GAP
        for o in others
    )
