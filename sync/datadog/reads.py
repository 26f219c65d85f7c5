"""What is live in Datadog, as Live objects: ownership read from the marker each object carries."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from sync.core.plan import CREATE, Live, Plan, make_plan
from sync.core.resources import DASHBOARD, DASHBOARD_MARKER, KEY_TAG_PREFIX, MANAGED_TAG, MONITOR, Resource
from sync.datadog.client import Datadog, RequestFailed


def monitor(obj: Mapping[str, Any]) -> Live:
    return Live(MONITOR, str(obj["id"]), monitor_key(obj.get("tags") or ()), obj, str(obj.get("created") or ""))


def monitor_key(tags: Iterable[str]) -> str | None:
    """The key of a monitor that carries both marker tags; one with two keys counts as unmanaged."""
    tags = list(tags)
    keys = [t.removeprefix(KEY_TAG_PREFIX) for t in tags if t.startswith(KEY_TAG_PREFIX)]
    return keys[0] if MANAGED_TAG in tags and len(keys) == 1 and keys[0] else None


def dashboard(obj: Mapping[str, Any]) -> Live:
    return Live(DASHBOARD, str(obj["id"]), dashboard_key(obj), obj, str(obj.get("created_at") or ""))


def dashboard_key(obj: Mapping[str, Any]) -> str | None:
    """The key in a dashboard description's marker line (dashboards cannot carry free tags)."""
    lines = str(obj.get("description") or "").splitlines()
    keys = [line.strip().removeprefix(DASHBOARD_MARKER) for line in lines if line.strip().startswith(DASHBOARD_MARKER)]
    return keys[0] if len(keys) == 1 and keys[0] else None


def plan(dd: Datadog, env: str, desired: Sequence[Resource], *, adopt: bool = False) -> Plan:
    """The plan of `env` against the live org, read in as few calls as the API allows.

    Monitors: ours in this environment, a thousand per call; should that leave a monitor to create, every
    monitor with our marker is read before deciding, since one whose env tag was removed by hand must be
    updated, not duplicated. With `adopt`, every monitor of the org, to find the ones to take over.
    Dashboards: the summaries, then only the dashboards that carry a marker of this environment or share
    a title with one of ours.
    """
    dashboards = _dashboards(dd, env, desired)
    monitors = dd.all_monitors() if adopt else dd.managed_monitors(env)
    found = make_plan(env, desired, [*map(monitor, monitors), *dashboards], adopt=adopt)
    if not adopt and any(c.action == CREATE and c.kind == MONITOR for c in found.changes):
        found = make_plan(env, desired, [*map(monitor, dd.managed_monitors(None)), *dashboards])
    return found


def _dashboards(dd: Datadog, env: str, desired: Sequence[Resource]) -> list[Live]:
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
