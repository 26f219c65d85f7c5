"""Pure: who a notification reaches, and which pages open an incident (the page audience's alert grouping)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from sync.core.evaluation.notify import Notification
from sync.core.evaluation.states import WARN

# Notifications that open or repeat an incident; a recovery reaching the pager closes one and is no page. A
# renotification reaches PagerDuty as a new trigger once the responder has resolved the incident, so it pages
# unless the scenario says the incident is still open.
PAGING_KINDS = ("alert", "warning", "no_data", "downtime_end", "renotify")


@dataclass(frozen=True)
class Audience:
    page: frozenset[str]
    chat: frozenset[str]
    incident_open: bool = False  # the responder keeps the incident open: a renotification joins it
    # The page audience's alert grouping (PagerDuty time-based): an alert within this many minutes of the last
    # alert grouped into an incident joins it and notifies no one anew. 0: every page opens its own incident.
    group_minutes: int = 0

    def paged(self, n: Notification) -> bool:
        """An unmuted alert (or no data, or a downtime's end) reaching the page audience. A warning pages only
        through a handle that is not also the chat audience's: where both audiences are one channel (a
        staging that posts everything to chat), a warning is the chat message it was routed as."""
        if n.muted or n.kind not in PAGING_KINDS or (n.kind == "renotify" and self.incident_open):
            return False
        if n.kind == "warning" or (n.kind in ("downtime_end", "renotify") and n.state == WARN):
            return bool(n.targets & (self.page - self.chat))
        return bool(n.targets & self.page)

    def closed(self, n: Notification) -> bool:
        """A recovery reaching the page audience: it resolves its monitor's alert in the incident."""
        return not n.muted and n.kind == "recovery" and bool(n.targets & self.page)

    def opening(
        self, pages: Sequence[tuple[int, str]], closes: Sequence[tuple[int, str]] = ()
    ) -> list[tuple[int, str]]:
        """The pages (minute, monitor) that open an incident. With grouping, a page joins the open incident when
        it comes within the window of the last alert grouped into it (the window rolls on with each one); an
        incident whose alerts have all recovered is resolved, and the next page opens a new one."""
        opened: list[tuple[int, str]] = []
        alerting: set[str] = set()
        last = 0
        # At one minute a recovery goes first: a page then finds the incident resolved, not joined.
        for t, is_page, key in sorted([*((t, False, k) for t, k in closes), *((t, True, k) for t, k in pages)]):
            if not is_page:
                alerting.discard(key)
            elif alerting and self.group_minutes and t - last < self.group_minutes:
                alerting.add(key)
                last = t
            else:
                opened.append((t, key))
                alerting, last = {key}, t
        return opened
