"""Check a request body against datadog-api-client's own models, plus the two checks they skip.

The models raise on wrong types and missing required fields, but keep unknown keys as additional
properties and mark bad enum values or unmatched oneOf shapes as `_unparsed` instead of raising.
"""

from __future__ import annotations

import importlib
import json
from collections.abc import Iterable, Mapping
from functools import cache, lru_cache
from typing import Any, TypeGuard

import orjson
from datadog_api_client import ApiClient, Configuration
from datadog_api_client.exceptions import OpenApiException
from datadog_api_client.model_utils import ModelComposed, ModelNormal, ModelSimple, UnparsedObject

from sync.core.kinds import Kind
from sync.core.resources import Resource


@cache
def _model(name: str) -> type:
    """A datadog-api-client model by its name below the package, as a kind's record gives it."""
    module, _, attribute = name.rpartition(".")
    found: type = getattr(importlib.import_module(f"datadog_api_client.{module}"), attribute)
    return found


@cache
def _client() -> ApiClient:
    return ApiClient(Configuration())  # type: ignore[no-untyped-call]


Problem = tuple[str, str]  # (dotted path in the body, what is wrong there)


def problems(kind: Kind, body: Mapping[str, Any]) -> list[str]:
    """What the Datadog API would reject in this create/update body; empty when it is accepted."""
    return [f"{path or 'body'}: {what}" for path, what in located(kind, body)]


def located(kind: Kind, body: Mapping[str, Any]) -> list[Problem]:
    return list(_located(kind.model.name, json.dumps(body, sort_keys=True)))


# Environments share a dashboard's widgets, and a run checks the same bodies again (validate, then plan):
# a verdict is kept per exact body.
@lru_cache(maxsize=4096)
def _located(model: str, body: str) -> tuple[Problem, ...]:
    try:
        parsed = _client().deserialize(body, (_model(model),), True)
    except (OpenApiException, TypeError, ValueError) as exc:
        return (("", str(exc).splitlines()[0]),)
    found: list[Problem] = []
    _walk(parsed, "", found)
    if not found and parsed._unparsed:
        found.append(("", "holds a value the API does not know"))
    return tuple(found)


def _item_by_item(kind: Kind, body: Mapping[str, Any]) -> list[Problem]:
    """A body whose list (a dashboard's widgets) is checked item by item, each shape of item once."""
    assert kind.model.each is not None
    name, model = kind.model.each
    items = body.get(name)
    if not _objects(items):
        return located(kind, body)
    return located(kind, {**body, name: []}) + _items(model, items, name, kind.model.free_text or frozenset())


def _items(model: str, items: list[dict[str, Any]], at: str, free: frozenset[str]) -> list[Problem]:
    """Items that differ only in the text under `free` keys (a widget per queue) share one check, of the first
    of them: a problem found there is reported at each."""
    verdicts: dict[str, list[Problem]] = {}
    found: list[Problem] = []
    for index, item in enumerate(items):
        shape = json.dumps(_texts_blanked(item, free), sort_keys=True)
        if shape not in verdicts:
            verdicts[shape] = _item(model, item, free)
        found += [(_join(f"{at}[{index}]", path), what) for path, what in verdicts[shape]]
    return found


def _item(model: str, item: dict[str, Any], free: frozenset[str]) -> list[Problem]:
    """One item; a group's own widgets each as an item of their own."""
    definition = item.get("definition")
    inner = definition.get("widgets") if isinstance(definition, dict) else None
    if not isinstance(definition, dict) or not _objects(inner):
        return list(_located(model, json.dumps(item, sort_keys=True)))
    group = {**item, "definition": {**definition, "widgets": []}}
    return [*_located(model, json.dumps(group, sort_keys=True)), *_items(model, inner, "definition.widgets", free)]


def _objects(items: Any) -> TypeGuard[list[dict[str, Any]]]:
    return isinstance(items, list) and all(isinstance(item, dict) for item in items)


def _texts_blanked(value: Any, free: frozenset[str], key: str = "") -> Any:
    """The value with the text under `free` keys blanked, all else kept."""
    if isinstance(value, dict):
        return {k: _texts_blanked(v, free, k) for k, v in value.items()}
    if isinstance(value, list):
        return [_texts_blanked(v, free, key) for v in value]
    return "" if isinstance(value, str) and key in free else value


def rejected(resources: Iterable[Resource]) -> list[tuple[Resource, Problem]]:
    """Problems of every resource. obs itself builds monitor bodies, so monitors that differ only in
    text and numbers share one check (a fleet has few shapes and many monitors)."""
    found: list[tuple[Resource, Problem]] = []
    checked: dict[tuple[str, bytes], list[Problem]] = {}
    for resource in resources:
        if resource.kind.model.by_shape:
            blanked = resource.kind.model.free_text
            # orjson: a fleet's ten thousand shapes are written in a tenth of the time json takes.
            shape = resource.kind.name, orjson.dumps(_shape(resource.body, blanked), option=orjson.OPT_SORT_KEYS)
            if shape not in checked:
                checked[shape] = located(resource.kind, resource.body)
            result = checked[shape]
        else:
            check = _item_by_item if resource.kind.model.each else located
            result = check(resource.kind, _shortened(resource.body))
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
        _walk_composed(value, path, found)
    elif isinstance(value, ModelSimple):
        if value._unparsed:
            found.append((path, f"{value.value!r} is not an allowed value"))
    elif isinstance(value, ModelNormal):
        _walk_normal(value, path, found)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            _walk(item, f"{path}[{index}]", found)
    elif isinstance(value, dict):
        for name, item in value.items():
            _walk(item, _join(path, str(name)), found)


def _walk_composed(value: ModelComposed, path: str, found: list[Problem]) -> None:
    """A oneOf: the shape it parsed as, or none (then the API has no shape for it)."""
    for instance in value._composed_instances:
        if isinstance(instance, ModelNormal):
            _walk(instance, path, found)
        else:
            found.append((path, "matches no shape the API knows (a wrong widget type or key?)"))


def _walk_normal(value: ModelNormal, path: str, found: list[Problem]) -> None:
    """An object: each key it knows, walked by its API name; a key it does not know is a problem."""
    known = type(value).attribute_map
    for name, item in value._data_store.items():
        if name not in known:
            found.append((_join(path, name), "unknown key"))
        else:
            _walk(item, _join(path, known[name]), found)


def _join(path: str, name: str) -> str:
    return f"{path}.{name}" if path else name
