"""Pure: the kinds of Datadog object obs manages, one record each, so nothing else branches on a kind's name.

A record says what the rest of the code asks of a kind: what output calls it, where it falls in a sync,
how a live object carries our ownership marker, which field cannot change in place, and what the API
offers for it. The Datadog side is registered per kind in `sync.datadog.client.APIS` (endpoints) and
`sync.datadog.reads.READERS` (listing).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Marker = Literal["tags", "description", "message"]


@dataclass(frozen=True)
class Kind:
    name: str  # what output and the API path call it: slo, monitor, dashboard
    plural: str
    order: int  # written in ascending order and deleted in descending: what others link to goes first
    fixed: str  # the field the API cannot change in place: a change is a delete and create
    title_field: str  # what a person calls the object
    created_field: str  # the server's creation time: of two objects with one key the older is kept
    marker: Marker  # where our ownership marker lives: free tags, or a line of the description or message
    numeric_id: bool = False  # the API takes the ID as an integer
    validated: bool = False  # the API can check a body without writing it (a dry run uses it)
    notifies: bool = False  # its message routes notifications to audiences (who gets paged)
    links: bool = False  # its body may hold placeholders for other objects' IDs, filled in at sync time
    # What approves a deletion (obs sync --plan): the live fields obs writes, less those the server moves on
    # its own (a monitor's state, a recurring downtime's current occurrence), so only an edit changes them.
    approved_by: tuple[str, ...] = ()
    # More fields whose change, like `fixed`'s, the API cannot make in place (an update cannot unset them).
    recreate_on: tuple[str, ...] = ()

    def __str__(self) -> str:
        return self.name

    def count(self, n: int) -> str:
        return f"{n} {self.name if n == 1 else self.plural}"


# The Terraform provider forces a new resource on the same fields.
# SLOs come first: burn-rate monitors and dashboard widgets refer to them by ID.
SLO = Kind(
    "slo", "slos", order=0, fixed="type", title_field="name", created_field="created_at", marker="tags",
    approved_by=("description", "name", "query", "tags", "thresholds", "timeframe", "type"),
)  # fmt: skip
DASHBOARD = Kind(
    "dashboard", "dashboards", order=1, fixed="layout_type", title_field="title", created_field="created_at",
    marker="description", links=True,
    approved_by=("description", "layout_type", "template_variables", "title", "widgets"),
)  # fmt: skip
MONITOR = Kind(
    "monitor", "monitors", order=2, fixed="type", title_field="name", created_field="created", marker="tags",
    numeric_id=True, validated=True, notifies=True, links=True,
    approved_by=("message", "name", "options", "priority", "query", "tags", "type"),
)  # fmt: skip

# A monitor whose query combines other monitors by ID (`123 && 456`): written after them, deleted before
# them (the API refuses to delete a monitor a composite references). Same endpoint as monitors, told apart
# by `type: composite`. Not validated in a dry run: the monitors it references may not exist yet.
COMPOSITE = Kind(
    "composite", "composites", order=3, fixed="type", title_field="name", created_field="created", marker="tags",
    numeric_id=True, notifies=True, links=True,
    approved_by=("message", "name", "options", "priority", "query", "tags", "type"),
)  # fmt: skip

# A v2 downtime has no tags and no name: the marker is the last line of its message, which the API keeps
# as sent. Written after the monitors it mutes and deleted before them; `schedule` can change in place.
DOWNTIME = Kind(
    "downtime", "downtimes", order=4, fixed="", title_field="message", created_field="created", marker="message",
    approved_by=("message", "monitor_identifier", "scope"),
)  # fmt: skip

# A planned window's correction of a queue's SLO: the SLO counts the window's minutes as good. It names its
# SLO by ID, so it is written after it and deleted before it; an update cannot move it to another SLO
# (`slo_id` is not in the update body) nor turn a recurring correction into a one-time one (rrule).
# No tags and no name: the marker is the last line of its description, which holds no user text.
SLO_CORRECTION = Kind(
    "slo-correction", "slo-corrections", order=5, fixed="slo_id", title_field="description",
    created_field="created_at", marker="description", links=True, recreate_on=("rrule",),
    approved_by=("category", "description", "duration", "end", "rrule", "slo_id", "start", "timezone"),
)  # fmt: skip

KINDS: tuple[Kind, ...] = tuple(
    sorted((SLO, DASHBOARD, MONITOR, COMPOSITE, DOWNTIME, SLO_CORRECTION), key=lambda k: k.order)
)
_BY_NAME = {k.name: k for k in KINDS}


def named(name: str) -> Kind:
    """The kind a name stands for, as written in output and JSON."""
    return _BY_NAME[name]
