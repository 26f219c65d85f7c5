"""What is live in Datadog, as Live objects: ownership read from the marker each object carries."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sync.core.kinds import COMPOSITE, DASHBOARD, DOWNTIME, KINDS, MONITOR, SLO, SLO_CORRECTION, Kind
from sync.core.plan import Action, Live, Plan, make_plan
from sync.core.resources import KEY_TAG_PREFIX, Resource, owner_key, tags_key
from sync.datadog.client import Datadog, RequestFailed


@dataclass(frozen=True)
class Reader:
    """How the live objects of one kind are read, in as few calls as its endpoints allow."""

    listed: Callable[[Datadog, str, Sequence[Resource], bool], list[Live]]  # dd, env, desired, adopt
    find: Callable[[Datadog, str], list[Live]]  # the objects that may carry a key (a create's answer was lost)
    # Read before deciding to create: every object with our marker, whatever its environment says.
    wider: Callable[[Datadog], list[Live]] | None = None
    # The list filters nothing: `listed` and `wider` read every object of the org, and so would each `find`.
    # Lost answers are then checked together, with one read, at the end of the run (settle.py).
    complete: bool = False


def live(kind: Kind, obj: Mapping[str, Any], key: str | None) -> Live:
    return Live(kind, str(obj["id"]), key, obj, str(obj.get(kind.created_field) or ""))


def monitor(obj: Mapping[str, Any]) -> Live:
    return live(monitor_kind(obj), obj, monitor_key(obj.get("tags") or ()))


def monitor_kind(obj: Mapping[str, Any]) -> Kind:
    """Composites come from the monitor endpoint too; their type tells them apart."""
    return COMPOSITE if obj.get("type") == "composite" else MONITOR


def _of(kind: Kind, objs: Iterable[Mapping[str, Any]]) -> list[Live]:
    """The objects of one kind among those the monitor endpoint returned: neither kind claims the other's."""
    return [found for found in map(monitor, objs) if found.kind == kind]


def monitor_key(tags: Iterable[str]) -> str | None:
    """The key of a monitor that carries both marker tags; one with two keys counts as unmanaged."""
    return tags_key(tags)


def slo(obj: Mapping[str, Any]) -> Live:
    """An SLO carries our marker in its tags, like a monitor."""
    return live(SLO, obj, monitor_key(obj.get("tags") or ()))


def dashboard(obj: Mapping[str, Any]) -> Live:
    return live(DASHBOARD, obj, dashboard_key(obj))


def dashboard_key(obj: Mapping[str, Any]) -> str | None:
    """The key in a dashboard description's marker line, its last (dashboards cannot carry free tags)."""
    return owner_key(DASHBOARD, obj)


def downtime(obj: Mapping[str, Any]) -> Live:
    return live(DOWNTIME, obj, downtime_key(obj))


def downtime_key(obj: Mapping[str, Any]) -> str | None:
    """The key in a downtime message's marker line, its last (downtimes carry no tags). An ad-hoc downtime's
    marker (ADHOC_MARKER) differs, so it reads as unmanaged: a sync never changes or deletes it."""
    return owner_key(DOWNTIME, obj)


def slo_correction(obj: Mapping[str, Any]) -> Live:
    return live(SLO_CORRECTION, obj, correction_key(obj))


def correction_key(obj: Mapping[str, Any]) -> str | None:
    """The key in the last line of an SLO correction's description, which holds no user text."""
    return owner_key(SLO_CORRECTION, obj)


def plan(dd: Datadog, env: str, desired: Sequence[Resource], *, adopt: bool = False) -> Plan:
    """The plan of `env` against the live org, read in as few calls as the API allows.

    Monitors: ours in this environment, a thousand per call; should that leave a monitor to create, every
    monitor with our marker is read before deciding, since one whose env tag was removed by hand must be
    updated, not duplicated. With `adopt`, every monitor of the org, to find the ones to take over.
    Dashboards: the summaries, then only the dashboards that carry a marker of this environment or share
    a title with one of ours.
    """
    with dd.shared_reads():  # monitors and composites: one endpoint, read once
        found = {kind: READERS[kind].listed(dd, env, desired, adopt) for kind in KINDS}
        result = make_plan(env, desired, [obj for objs in found.values() for obj in objs], adopt=adopt)
        wider = {
            c.kind
            for c in result.changes
            if c.action == Action.CREATE and READERS[c.kind].wider is not None and not READERS[c.kind].complete
        }
        if adopt or not wider:
            return result
        for kind in sorted(wider, key=lambda k: k.order):
            found[kind] = READERS[kind].wider(dd)  # type: ignore[misc]
    return make_plan(env, desired, [obj for objs in found.values() for obj in objs])


def _monitors(kind: Kind) -> Callable[[Datadog, str, Sequence[Resource], bool], list[Live]]:
    def listed(dd: Datadog, env: str, desired: Sequence[Resource], adopt: bool) -> list[Live]:
        return _of(kind, dd.all_monitors() if adopt else dd.managed_monitors(env))

    return listed


def _monitor_reader(kind: Kind) -> Reader:
    return Reader(
        _monitors(kind),
        find=lambda dd, key: _of(kind, dd.find_monitors(f"{KEY_TAG_PREFIX}{key}")),
        wider=lambda dd: _of(kind, dd.managed_monitors(None)),
    )


def _dashboards(dd: Datadog, env: str, desired: Sequence[Resource], adopt: bool) -> list[Live]:
    titles = {r.title.strip() for r in desired if r.kind == DASHBOARD}
    found = []
    for summary in dd.dashboard_summaries():
        if _worth_fetching(summary, env, titles):
            try:
                found.append(dashboard(dd.dashboard(str(summary["id"]))))
            except RequestFailed as exc:
                if exc.status != 404:  # deleted since it was listed: nothing to plan against
                    raise
    return found


def _worth_fetching(summary: Mapping[str, Any], env: str, titles: set[str]) -> bool:
    key = dashboard_key(summary)
    if key is not None:
        return key.split("/", 1)[0] == env
    return str(summary.get("title") or "").strip() in titles


READERS: Mapping[Kind, Reader] = {
    MONITOR: _monitor_reader(MONITOR),
    COMPOSITE: _monitor_reader(COMPOSITE),
    # The list filters on one tag: ours, of every environment, a thousand per call.
    SLO: Reader(
        lambda dd, env, desired, adopt: [slo(o) for o in dd.managed_slos()],
        find=lambda dd, key: [s for s in map(slo, dd.managed_slos()) if s.key == key],
        wider=lambda dd: [slo(o) for o in dd.managed_slos()],
    ),
    DASHBOARD: Reader(_dashboards, find=lambda dd, key: [dashboard(s) for s in dd.dashboard_summaries()]),
    # The list endpoint filters nothing we can use: every downtime of the org, a hundred per call.
    DOWNTIME: Reader(
        lambda dd, env, desired, adopt: [downtime(d) for d in dd.downtimes()],
        find=lambda dd, key: [found for found in map(downtime, dd.downtimes()) if found.key == key],
        wider=lambda dd: [downtime(d) for d in dd.downtimes()],
        complete=True,
    ),
    # Likewise every correction of the org, a hundred per call.
    SLO_CORRECTION: Reader(
        lambda dd, env, desired, adopt: [slo_correction(c) for c in dd.slo_corrections()],
        find=lambda dd, key: [found for found in map(slo_correction, dd.slo_corrections()) if found.key == key],
    ),
}
