"""What became of one planned change once the sync tried to make it."""

from __future__ import annotations

from dataclasses import dataclass

from sync.core.placeholders import Ref
from sync.core.plan import Change


@dataclass(frozen=True)
class Outcome:
    change: Change
    id: str | None = None  # the object's ID once the change is made
    error: str = ""
    note: str = ""
    doubtful: bool = False  # an answer was lost: the write may have happened (or, for a create, twice)
    # What it refers to that had no ID when it was sent: left out of it, or (in a query) why it failed.
    awaited: frozenset[Ref] = frozenset()
    absent: bool = False  # a create checked at the end of the run and not there: trying it again is safe

    @property
    def ok(self) -> bool:
        return not self.error
