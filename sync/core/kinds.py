"""Pure: the kinds of Datadog object obs manages, one record each, so nothing else branches on a kind's name.

A record is all obs knows of a kind: where it falls in a sync, how its live objects are listed, read and
found by key and where they carry our ownership marker (`Listing`), where it lives in the API and how a body
goes there (`Api`), the client model its bodies are checked against (`Model`), what the diff compares and
which server rewrites it undoes (`Diff`), what a person calls an object and where its page is. The records
hold plain data (paths, field and method names) and pure functions: the Datadog side (sync.datadog), the
model check (sync.check), the plan (sync.core.plan, sync.core.diff) and the reports read them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import Any, Literal

from sync.core.keys import Key
from sync.core.namespaces import NO_NAMESPACE, Mark, Ownership, from_line, from_tags

Marker = Literal["tags", "description", "message"]
# What a list can filter on: our tags and the environment's (several tags), our tag only, or nothing.
Filter = Literal["env", "ours", "none"]


def _every(body: Mapping[str, Any]) -> bool:
    return True


@dataclass(frozen=True)
class Api:
    """Where a kind lives in the API: its path and the datadog-api-client class whose create_/update_/
    delete_ methods take it (named below `datadog_api_client`, so the core imports no client)."""

    path: str
    client: str  # e.g. v1.api.monitors_api.MonitorsApi
    noun: str  # the method suffix: create_monitor; the rate-limit budget: "monitors write"
    # A JSON:API kind (v2) sends {"data": {"type", "attributes"}} and answers likewise; obs plans with the
    # attributes plus the id, so the envelope is put on and taken off by the Datadog side.
    envelope: str | None = None
    update_verb: str = "update"
    delete_verb: str = "delete"  # a v2 downtime is canceled, not deleted: it stays listed as canceled
    wrapped: bool = False  # answers carry the object in `data` (a create's and an update's as a list of one)
    update_id: bool = True  # an update's envelope carries the id (an SLO correction's has only the path's)
    # Fields a create sends and an update may not (the kind's fixed field: a change of it is a replacement).
    create_only: tuple[str, ...] = ()
    numeric_id: bool = False  # the API takes the ID as an integer
    validates: bool = False  # the API can check a body without writing it (a dry run uses it)


@dataclass(frozen=True)
class Listing:
    """How the live objects of a kind are listed, in as few calls as its list endpoint allows, and where
    each carries our ownership marker."""

    operation: str  # the client's list method
    size: int  # objects asked for per call
    marker: Marker  # free tags, or the last line of the description or message
    created: str  # the server's creation time: of two objects with one key the older is kept
    filters: Filter = "none"
    tags: str = ""  # the list's parameter that filters on tags
    offset: str = "offset"  # the list's paging parameters
    limit: str = "limit"
    by_page: bool = False  # the offset counts pages, not objects
    items: str = "data"  # where an answer holds the objects; "" when it is a bare list
    total: str = ""  # the answer's count of every object (meta.page.<total>), which ends the list
    detail: str = ""  # the list holds summaries: the client's method that reads one object whole
    ended: tuple[str, ...] = ()  # statuses of listed objects that no longer count (a canceled downtime)
    # Read before deciding to create: every object with our marker, whatever its environment says.
    wider: bool = False
    # The list filters nothing: every read reads every object of the org, and so would each lookup by key.
    # Lost answers are then checked together, with one read, at the end of the run (sync.datadog.settle).
    complete: bool = False
    claims: Callable[[Mapping[str, Any]], bool] = _every  # which objects of a shared endpoint are this kind's


@dataclass(frozen=True)
class Model:
    """The datadog-api-client model a body is checked against before anything is sent (sync.check.models)."""

    name: str  # below datadog_api_client: v1.model.monitor.Monitor
    by_shape: bool = False  # obs builds these bodies from few templates: one check per shape of body
    # The text a shape blanks: all of it (None), or only the fields named (a downtime's schedule, its dates and
    # RRULEs, stays as written: the client parses those). With `each`, what an item's shape blanks.
    free_text: frozenset[str] | None = None
    # A list checked item by item, against its own model: (field, model). Items (and a group's items) of the
    # same shape share a check: a fleet's dashboard holds hundreds of widgets that differ only in text.
    each: tuple[str, str] | None = None


@dataclass(frozen=True)
class Diff:
    """What the diff compares for a kind (sync.core.diff) and the server's rewrites it undoes. Paths are
    dotted; `[]` stands for any list index."""

    fixed: str  # the field the API cannot change in place: a change is a delete and create
    recreate_on: tuple[str, ...] = ()  # more fields an update cannot change (it cannot unset them)
    unordered: frozenset[str] = frozenset()  # lists whose order the server does not keep
    owned_whole: tuple[str, ...] = ()  # mappings and lists obs owns whole: the server adds nothing inside
    # Keys obs leaves out when unset instead of sending a default, which the server does not fill in: a live
    # value left from an older definition is a change.
    owned_when_absent: frozenset[str] = frozenset()
    aliases: Mapping[str, Mapping[str, str]] = field(default_factory=dict)  # path -> server's spelling -> ours
    zero_is_unset: frozenset[str] = frozenset()  # the server stores 0 as null
    moments: frozenset[str] = frozenset()  # ISO 8601 times, answered in any equivalent spelling
    rrules: frozenset[str] = frozenset()  # keys, at any depth, holding an RRULE: its parts in any order

    @cached_property
    def inside_whole(self) -> tuple[str, ...]:
        """The prefixes of the paths inside what obs owns whole."""
        return tuple(f"{path}{c}" for path in self.owned_whole for c in ".[")

    @cached_property
    def absent_owned(self) -> dict[tuple[str, str], bool]:
        """sync.core.diff's answers, kept: whether obs owns a key (under a parent path) the body leaves out."""
        return {}


@dataclass(frozen=True, eq=False)  # one object per kind: compared and hashed by identity, as dict keys often
class Kind:
    name: str  # what output and the API path call it: slo, monitor, dashboard
    plural: str  # also the folder `obs render` writes its bodies to
    order: int  # written in ascending order and deleted in descending: what others link to goes first
    api: Api
    listing: Listing
    model: Model
    diff: Diff
    title_field: str  # what a person calls the object
    title_line: bool = False  # the title field is free text (a message): its first line is the title
    page: str = ""  # its page in the Datadog app, below the app host ({id}); "" when it has none
    queue_from: Literal["tags", "key", ""] = ""  # where a rendered body names its queue
    notifies: bool = False  # its message routes notifications to audiences (who gets paged)
    links: bool = False  # its body may hold placeholders for other objects' IDs, filled in at sync time
    # What approves a deletion (obs sync --plan): the live fields obs writes, less those the server moves on
    # its own (a monitor's state, a recurring downtime's current occurrence), so only an edit changes them.
    approved_by: tuple[str, ...] = ()

    def __str__(self) -> str:
        return self.name

    def __reduce__(self) -> tuple[Callable[[str], Kind], tuple[str]]:
        """A copy, deep or pickled, is the kind itself: kinds compare by identity."""
        return named, (self.name,)

    def count(self, n: int) -> str:
        return f"{n} {self.name if n == 1 else self.plural}"

    def title(self, body: Mapping[str, Any]) -> str:
        """What a person calls the object: a monitor's name, a dashboard's title, the first line of a
        downtime's message or of an SLO correction's description."""
        title = str(body.get(self.title_field) or "")
        return title.partition("\n")[0] if self.title_line else title

    def mark(self, body: Mapping[str, Any]) -> Mark | None:
        """The ownership marker a live or rendered object carries, wherever this kind keeps it (its key and
        namespace); None when it carries none. The one reader of ownership: the Datadog side and the preview
        both ask it, through `owner`."""
        if self.listing.marker == "tags":
            found = body.get("tags")
            return from_tags(str(t) for t in found) if isinstance(found, list | tuple) else None
        return from_line(str(body.get(self.listing.marker) or ""))

    def owner(self, body: Mapping[str, Any], ownership: Ownership = NO_NAMESPACE) -> str | None:
        """The key of an object the definitions set of `ownership` owns (or takes over); None when it is not
        theirs: unmarked, or another namespace's."""
        return ownership.key(self.mark(body))

    def queue(self, key: str, body: Mapping[str, Any]) -> str | None:
        """The queue a rendered body belongs to, if any."""
        if self.queue_from == "tags":
            tags = body.get("tags") or ()
            return next((str(t).removeprefix("queue:") for t in tags if str(t).startswith("queue:")), None)
        if self.queue_from == "key":
            parsed = Key.parse(key)
            return parsed.queue if parsed is not None else None
        return None


def _composite(body: Mapping[str, Any]) -> bool:
    return body.get("type") == "composite"


# The Terraform provider forces a new resource on the same fields.
# SLOs come first: burn-rate monitors and dashboard widgets refer to them by ID. The list filters on one tag:
# ours, of every environment, a thousand per call.
SLO = Kind(
    "slo", "slos", order=0, title_field="name", page="/slo/manage?slo_id={id}", queue_from="tags",
    api=Api("/api/v1/slo", "v1.api.service_level_objectives_api.ServiceLevelObjectivesApi", "slo", wrapped=True),
    listing=Listing(
        "list_slos", 1000, marker="tags", created="created_at", filters="ours", tags="tags_query", wider=True
    ),
    model=Model("v1.model.service_level_objective_request.ServiceLevelObjectiveRequest", by_shape=True),
    diff=Diff(
        fixed="type", unordered=frozenset({"tags"}),
        # An SLO's per-timeframe warning, like its warning_threshold, stays live until a full update drops it.
        owned_when_absent=frozenset({"warning_threshold", "thresholds[].warning"}),
    ),
    approved_by=("description", "name", "query", "tags", "thresholds", "timeframe", "type"),
)  # fmt: skip

# Dashboards cannot carry free tags: the marker is the last line of the description. The list holds
# summaries; only those of this environment, or that share a title with one of ours, are read whole.
DASHBOARD = Kind(
    "dashboard", "dashboards", order=1, title_field="title", page="/dashboard/{id}", links=True,
    api=Api("/api/v1/dashboard", "v1.api.dashboards_api.DashboardsApi", "dashboard"),
    listing=Listing(
        "list_dashboards", 1000, marker="description", created="created_at", offset="start", limit="count",
        items="dashboards", detail="get_dashboard",
    ),
    model=Model(
        "v1.model.dashboard.Dashboard", each=("widgets", "v1.model.widget.Widget"),
        free_text=frozenset({"alias", "content", "formula", "label", "link", "name", "q", "query", "slo_id", "title"}),
    ),
    diff=Diff(fixed="layout_type", owned_whole=("widgets", "template_variables")),
    approved_by=("description", "layout_type", "template_variables", "title", "widgets"),
)  # fmt: skip

# Monitors and composites share one endpoint and one list read; `type: composite` tells them apart. The list
# filters on several tags: ours in this environment, a thousand per call.
_MONITORS = Api("/api/v1/monitor", "v1.api.monitors_api.MonitorsApi", "monitor", numeric_id=True)
_MONITOR_LIST = Listing(
    "list_monitors", 1000, marker="tags", created="created", filters="env", tags="monitor_tags", offset="page",
    limit="page_size", by_page=True, items="", wider=True, claims=lambda body: not _composite(body),
)  # fmt: skip
_MONITOR_DIFF = Diff(
    fixed="type", unordered=frozenset({"tags"}), owned_whole=("options.thresholds",),
    owned_when_absent=frozenset({"priority", "options.renotify_interval"}),
    aliases={"type": {"metric alert": "query alert"}},  # the server swaps these two for classic metric queries
    zero_is_unset=frozenset({"priority"}),
)  # fmt: skip
_MONITOR_FIELDS = ("message", "name", "options", "priority", "query", "tags", "type")

MONITOR = Kind(
    "monitor", "monitors", order=2, title_field="name", page="/monitors/{id}", queue_from="tags",
    api=replace(_MONITORS, validates=True), listing=_MONITOR_LIST,
    model=Model("v1.model.monitor.Monitor", by_shape=True), diff=_MONITOR_DIFF,
    notifies=True, links=True, approved_by=_MONITOR_FIELDS,
)  # fmt: skip

# A monitor whose query combines other monitors by ID (`123 && 456`): written after them, deleted before
# them (the API refuses to delete a monitor a composite references). Not validated in a dry run: the
# monitors it references may not exist yet.
COMPOSITE = Kind(
    "composite", "composites", order=3, title_field="name", page="/monitors/{id}", queue_from="tags",
    api=_MONITORS, listing=replace(_MONITOR_LIST, claims=_composite),
    model=Model("v1.model.monitor.Monitor", by_shape=True), diff=_MONITOR_DIFF,
    notifies=True, links=True, approved_by=_MONITOR_FIELDS,
)  # fmt: skip

# A v2 downtime has no tags and no name: the marker is the last line of its message, which the API keeps
# as sent. Written after the monitors it mutes and deleted before them; `schedule` can change in place.
# The list filters nothing: every downtime of the org, a hundred per call, until the answer's total.
DOWNTIME = Kind(
    "downtime", "downtimes", order=4, title_field="message", title_line=True, queue_from="key",
    page="/monitors/downtimes?id={id}",
    api=Api("/api/v2/downtime", "v2.api.downtimes_api.DowntimesApi", "downtime", envelope="downtime",
            delete_verb="cancel"),
    listing=Listing(
        "list_downtimes", 100, marker="message", created="created", offset="page_offset", limit="page_limit",
        total="total_filtered_count", ended=("canceled", "ended"), wider=True, complete=True,
    ),
    model=Model(
        "v2.model.downtime_create_request_attributes.DowntimeCreateRequestAttributes",
        by_shape=True,
        free_text=frozenset({"message", "scope", "monitor_tags"}),
    ),
    diff=Diff(
        fixed="", unordered=frozenset({"notify_end_states", "notify_end_types", "monitor_identifier.monitor_tags"}),
        moments=frozenset({"schedule.start", "schedule.end"}), rrules=frozenset({"rrule"}),
    ),
    approved_by=("message", "monitor_identifier", "scope"),
)  # fmt: skip

# A planned window's correction of a queue's SLO: the SLO counts the window's minutes as good. It names its
# SLO by ID, so it is written after it and deleted before it; an update cannot move it to another SLO
# (`slo_id` is not in the update body) nor turn a recurring correction into a one-time one (rrule).
# No tags and no name: the marker is the last line of its description, which holds no user text. The list
# filters nothing: every correction of the org, a hundred per call.
SLO_CORRECTION = Kind(
    "slo-correction", "slo-corrections", order=5, title_field="description", title_line=True, queue_from="key",
    links=True,
    api=Api(
        "/api/v1/slo/correction", "v1.api.service_level_objective_corrections_api.ServiceLevelObjectiveCorrectionsApi",
        "slo_correction", envelope="correction", update_id=False, create_only=("slo_id",),
    ),
    listing=Listing("list_slo_correction", 100, marker="description", created="created_at", total="total_count"),
    model=Model("v1.model.slo_correction_create_request_attributes.SLOCorrectionCreateRequestAttributes"),
    diff=Diff(
        fixed="slo_id", recreate_on=("rrule",),
        # A recurring correction that becomes one-time must not stay recurring.
        owned_when_absent=frozenset({"rrule"}), rrules=frozenset({"rrule"}),
    ),
    approved_by=("category", "description", "duration", "end", "rrule", "slo_id", "start", "timezone"),
)  # fmt: skip

KINDS: tuple[Kind, ...] = tuple(
    sorted((SLO, DASHBOARD, MONITOR, COMPOSITE, DOWNTIME, SLO_CORRECTION), key=lambda k: k.order)
)
_BY_NAME = {k.name: k for k in KINDS}


def named(name: str) -> Kind:
    """The kind a name stands for, as written in output and JSON."""
    return _BY_NAME[name]
