"""Refuse bodies the Datadog API would reject, naming the definition they came from."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from sync.check import models
from sync.core.keys import Key
from sync.core.kinds import DASHBOARD, Kind
from sync.core.resources import Resource
from sync.definitions.model import Definitions
from sync.definitions.source import undotted
from sync.errors import ObsError, Problem

_MAX_SHOWN = 20


def check(defs: Definitions, resources: Sequence[Resource]) -> None:
    report(defs, models.rejected(resources))


def report(defs: Definitions, rejected: Iterable[tuple[Resource, models.Problem]]) -> None:
    """What the API would reject, raised as one error. A dashboard problem points into its template, once for all
    environments that share it."""
    found: dict[tuple[Kind, str, str, str], list[str]] = {}
    for resource, (path, what) in rejected:
        origin = Key.of(resource.key).name if resource.kind == DASHBOARD else resource.key  # env/template
        found.setdefault((resource.kind, origin, path, what), []).append(resource.env)
    if not found:
        return
    problems = []
    for (kind, origin, path, what), envs in found.items():
        where = f"{path or 'body'}: {what}"
        if kind == DASHBOARD:
            template = next(t for t in defs.dashboards if t.name == origin)
            problems.append(
                Problem(
                    what=f"the Datadog API would reject {where} (in {', '.join(sorted(set(envs)))})",
                    fix="fix the widget or variable there; the Datadog dashboard API reference lists its keys",
                    file=template.source.path,
                    line=template.source.line_of(undotted(path)),
                )
            )
        else:
            problems.append(Problem(what=f"{kind} {origin}: the Datadog API would reject {where}", fix="report it"))
    shown = problems[:_MAX_SHOWN]
    if len(problems) > _MAX_SHOWN:
        shown.append(Problem(what=f"... and {len(problems) - _MAX_SHOWN} more"))
    raise ObsError(*shown)
