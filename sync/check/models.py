"""Check a request body against datadog-api-client's own models, plus the two checks they skip.

The models raise on wrong types and missing required fields, but keep unknown keys as additional
properties and mark bad enum values or unmatched oneOf shapes as `_unparsed` instead of raising.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from functools import cache, lru_cache
from typing import Any

from datadog_api_client import ApiClient, Configuration
from datadog_api_client.exceptions import OpenApiException
from datadog_api_client.model_utils import ModelComposed, ModelNormal, ModelSimple, UnparsedObject
from datadog_api_client.v1.model.dashboard import Dashboard
from datadog_api_client.v1.model.monitor import Monitor
from datadog_api_client.v1.model.service_level_objective_request import ServiceLevelObjectiveRequest
from datadog_api_client.v1.model.slo_correction_create_request_attributes import SLOCorrectionCreateRequestAttributes
from datadog_api_client.v1.model.widget import Widget
from datadog_api_client.v2.model.downtime_create_request_attributes import DowntimeCreateRequestAttributes

from sync.core.kinds import COMPOSITE, DASHBOARD, DOWNTIME, MONITOR, SLO, SLO_CORRECTION, Kind
from sync.core.resources import Resource

_MODELS: Mapping[str, type] = {
    MONITOR.name: Monitor,
    COMPOSITE.name: Monitor,  # a monitor of type composite
    DASHBOARD.name: Dashboard,
    SLO.name: ServiceLevelObjectiveRequest,
    DOWNTIME.name: DowntimeCreateRequestAttributes,  # the body is the JSON:API envelope's attributes
    SLO_CORRECTION.name: SLOCorrectionCreateRequestAttributes,  # likewise
    "widget": Widget,
}
# Kinds whose bodies obs builds from few templates: one check per shape (a fleet has few shapes, many bodies).
# Which text the shape blanks: all of it (None), or only the free text named (a downtime's schedule, its
# dates and RRULEs, stays as written: the client parses those).
_BY_SHAPE: Mapping[Kind, frozenset[str] | None] = {
    MONITOR: None,
    COMPOSITE: None,
    SLO: None,
    DOWNTIME: frozenset({"message", "scope", "monitor_tags"}),
}


@cache
def _client() -> ApiClient:
    return ApiClient(Configuration())  # type: ignore[no-untyped-call]


Problem = tuple[str, str]  # (dotted path in the body, what is wrong there)


def problems(kind: Kind, body: Mapping[str, Any]) -> list[str]:
    """What the Datadog API would reject in this create/update body; empty when it is accepted."""
    return [f"{path or 'body'}: {what}" for path, what in located(kind, body)]


def located(kind: Kind, body: Mapping[str, Any]) -> list[Problem]:
    return list(_located(kind.name, json.dumps(body, sort_keys=True)))


# Environments share a dashboard's widgets, and a run checks the same bodies again (validate, then plan):
# a verdict is kept per exact body.
@lru_cache(maxsize=4096)
def _located(model: str, body: str) -> tuple[Problem, ...]:
    try:
        parsed = _client().deserialize(body, (_MODELS[model],), True)
    except (OpenApiException, TypeError, ValueError) as exc:
        return (("", str(exc).splitlines()[0]),)
    found: list[Problem] = []
    _walk(parsed, "", found)
    if not found and parsed._unparsed:
        found.append(("", "holds a value the API does not know"))
    return tuple(found)


def _dashboard(body: Mapping[str, Any]) -> list[Problem]:
    """A dashboard checked widget by widget, so a widget every environment shares is checked once."""
    widgets = body.get("widgets")
    if not isinstance(widgets, list) or not all(isinstance(w, dict) for w in widgets):
        return located(DASHBOARD, body)
    found = located(DASHBOARD, {**body, "widgets": []})
    for index, widget in enumerate(widgets):
        at = f"widgets[{index}]"
        found += [
            (f"{at}.{path}" if path else at, what)
            for path, what in _located("widget", json.dumps(widget, sort_keys=True))
        ]
    return found


def rejected(resources: Iterable[Resource]) -> list[tuple[Resource, Problem]]:
    """Problems of every resource. obs itself builds monitor bodies, so monitors that differ only in
    text and numbers share one check (a fleet has few shapes and many monitors)."""
    found: list[tuple[Resource, Problem]] = []
    checked: dict[str, list[Problem]] = {}
    for resource in resources:
        if resource.kind in _BY_SHAPE:
            shape = resource.kind.name + json.dumps(_shape(resource.body, _BY_SHAPE[resource.kind]), sort_keys=True)
            if shape not in checked:
                checked[shape] = located(resource.kind, resource.body)
            result = checked[shape]
        else:
            result = (
                _dashboard(_shortened(resource.body))
                if resource.kind == DASHBOARD
                else located(resource.kind, _shortened(resource.body))
            )
        found += [(resource, problem) for problem in result]
    return found


_LONGEST, _MOST = 10_000, 501  # above every max_length (5,000) and max_items (500) of a dashboard's models


def _shortened(value: Any) -> Any:
    """The body with long text and long lists of plain values cut: the client tries to parse every string as
    a date, and a fleet's runbook note runs to hundreds of kilobytes, its template variables to thousands of
    names. Lists of objects (widgets, requests) are kept whole: each item is checked."""
    if isinstance(value, dict):
        return {k: _shortened(v) for k, v in value.items()}
    if isinstance(value, list):
        plain = all(isinstance(v, str | int | float | bool) or v is None for v in value)
        return [_shortened(v) for v in (value[:_MOST] if plain else value)]
    return value[:_LONGEST] if isinstance(value, str) else value


def _shape(value: Any, blanked: frozenset[str] | None, key: str = "") -> Any:
    """The body with its text (all of it, or that under the `blanked` keys) and numbers blanked, keeping
    types, keys and the enum `type`."""
    if isinstance(value, dict):
        return {k: _shape(v, blanked, k) for k, v in value.items()}
    if isinstance(value, list):
        return [_shape(v, blanked, key if blanked is not None else "") for v in value]
    if isinstance(value, str):
        return value if key == "type" or (blanked is not None and key not in blanked) else ""
    if isinstance(value, bool) or value is None:
        return value
    return type(value)()


def _walk(value: Any, path: str, found: list[Problem]) -> None:
    if isinstance(value, UnparsedObject):
        found.append((path, "matches no shape the API knows"))
    elif isinstance(value, ModelComposed):
        for instance in value._composed_instances:
            if isinstance(instance, ModelNormal):
                _walk(instance, path, found)
            else:
                found.append((path, "matches no shape the API knows (a wrong widget type or key?)"))
    elif isinstance(value, ModelSimple):
        if value._unparsed:
            found.append((path, f"{value.value!r} is not an allowed value"))
    elif isinstance(value, ModelNormal):
        known = type(value).attribute_map
        for name, item in value._data_store.items():
            if name not in known:
                found.append((_join(path, name), "unknown key"))
            else:
                _walk(item, _join(path, known[name]), found)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            _walk(item, f"{path}[{index}]", found)
    elif isinstance(value, dict):
        for name, item in value.items():
            _walk(item, _join(path, str(name)), found)


def _join(path: str, name: str) -> str:
    return f"{path}.{name}" if path else name
