"""Request bodies checked with the client's own models, plus the checks the models skip: unknown keys and enums."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

from datadog_api_client import ApiClient, Configuration
from datadog_api_client.exceptions import OpenApiException
from datadog_api_client.model_utils import ModelComposed, ModelNormal, ModelSimple, UnparsedObject

from .common import Rejected

# Only deserialize is used: it opens no connection.
_CLIENT = ApiClient(Configuration())  # type: ignore[no-untyped-call]
_TYPE_ERROR_PATH = re.compile(r" at \['received_data'\]((?:\[[^\]]+\])*)$")
_MISSING = re.compile(r"missing \d+ required (?:positional|keyword-only) arguments?: (.*)$")


def check(body: Any, model: type[ModelNormal], read_only: bool) -> None:
    """Raise Rejected(400) naming every field the model refuses; read_only=False also refuses server-owned fields."""
    if not isinstance(body, dict):
        raise Rejected(400, "Invalid JSON: the body must be an object")
    problems = list(_verdict(json.dumps(body), model))
    if not read_only:
        problems += [f"{name}: is a read-only field" for name in sorted(body) if name in model.read_only_vars]
    if problems:
        raise Rejected(400, *problems)


# Tests send the same dashboard again and again, and the models take a tenth of a second to parse one: a
# verdict is kept per body (a bounded number of them), known apart from the SLO ids in it. Those are the
# fake's own, drawn anew for every test, and any string is one to the model: they make no other verdict.
_VERDICTS: dict[tuple[type[ModelNormal], str], tuple[str, ...]] = {}
_SLO_ID = re.compile(r'"slo_id": "[0-9a-f]{32}"')


def _verdict(text: str, model: type[ModelNormal]) -> tuple[str, ...]:
    key = (model, _SLO_ID.sub('"slo_id": "<id>"', text))
    if key not in _VERDICTS:
        if len(_VERDICTS) >= 1024:
            _VERDICTS.clear()
        _VERDICTS[key] = _parsed_problems(text, model)
    return _VERDICTS[key]


def _parsed_problems(text: str, model: type[ModelNormal]) -> tuple[str, ...]:
    try:
        parsed = _CLIENT.deserialize(text, (model,), True)
    except OpenApiException as error:
        return (_type_error(str(error)),)
    except TypeError as error:
        return tuple(_missing(str(error)))
    return tuple(_problems(parsed, ""))


def _type_error(message: str) -> str:
    found = _TYPE_ERROR_PATH.search(message)
    if not found:
        return message
    path = re.sub(r"\['([^']*)'\]", r".\1", found.group(1)).lstrip(".")
    return f"{path}: {message[: found.start()]}"


def _missing(message: str) -> list[str]:
    found = _MISSING.search(message)
    names = re.findall(r"'([^']+)'", found.group(1)) if found else []
    return [f"{name}: is required" for name in names] or [message]


def _problems(value: Any, path: str) -> Iterator[str]:
    here = path or "body"
    if isinstance(value, UnparsedObject):
        yield f"{here}: matches no known shape"
    elif isinstance(value, ModelComposed):
        yield from _composed_problems(value, path)
    elif isinstance(value, ModelSimple):
        if value._unparsed:
            yield f"{here}: {value.value!r} is not an allowed value"
    elif isinstance(value, ModelNormal):
        yield from _normal_problems(value, path)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _problems(item, f"{path}[{index}]")
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _problems(item, f"{path}.{key}" if path else key)


def _composed_problems(value: ModelComposed, path: str) -> Iterator[str]:
    instances = value._composed_instances
    if not instances or any(isinstance(i, UnparsedObject) for i in instances):
        yield f"{path or 'body'}: matches no known shape"
    else:
        yield from _problems(instances[0], path)


def _normal_problems(value: ModelNormal, path: str) -> Iterator[str]:
    for name, item in value._data_store.items():
        key = value.attribute_map.get(name, name)
        inner = f"{path}.{key}" if path else key
        if name in value.openapi_types:
            yield from _problems(item, inner)
        else:
            yield f"{inner}: unknown key"
