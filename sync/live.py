"""What is live in Datadog, as Live objects: ownership read from the marker each object carries."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from .datadog import Datadog
from .plan import Live
from .resources import DASHBOARD, DASHBOARD_MARKER, KEY_TAG_PREFIX, MANAGED_TAG, MONITOR, Resource


def monitor(obj: Mapping[str, Any]) -> Live:
    return Live(MONITOR, str(obj["id"]), monitor_key(obj.get("tags") or ()), obj, str(obj.get("created") or ""))


def monitor_key(tags: Iterable[str]) -> str | None:
    """The key of a monitor that carries both marker tags; one with two keys is nobody's to touch."""
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


def read(dd: Datadog, env: str, desired: Sequence[Resource], *, adopt: bool = False) -> list[Live]:
    """Live objects that can matter to a plan of `env`, in as few calls as the API allows.

    Monitors: ours, a thousand per call (every monitor with `adopt`, to find the ones to take over).
    Dashboards: the summaries, then only the full dashboards that carry a marker of this environment or
    share a title with one of ours.
    """
    monitors = dd.all_monitors() if adopt else dd.managed_monitors(env)
    titles = {r.title.strip() for r in desired if r.kind == DASHBOARD}
    wanted = [s for s in dd.dashboard_summaries() if _worth_fetching(s, env, titles)]
    return [monitor(m) for m in monitors] + [dashboard(dd.dashboard(str(s["id"]))) for s in wanted]


def _worth_fetching(summary: Mapping[str, Any], env: str, titles: set[str]) -> bool:
    key = dashboard_key(summary)
    if key is not None:
        return key.split("/", 1)[0] == env
    return str(summary.get("title") or "").strip() in titles
