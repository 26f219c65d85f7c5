"""Check a loaded file against the JSON Schema shipped for its kind, reporting file:line and a fix."""

from __future__ import annotations

import difflib
import json
import re
from functools import cache
from importlib import resources
from typing import Any

import jsonschema
from referencing import Registry, Resource

from .errors import ObsError, Problem
from .source import Source, dotted

KINDS = ("queues", "environment", "metric", "dashboard", "settings")
_MAX_PROBLEMS = 10


@cache
def _schemas() -> dict[str, dict[str, Any]]:
    folder = resources.files("sync") / "schemas"
    return {kind: json.loads((folder / f"{kind}.schema.json").read_text()) for kind in KINDS}


@cache
def _validator(kind: str) -> jsonschema.Draft202012Validator:
    registry: Registry[Any] = Registry().with_resources(
        (f"{name}.schema.json", Resource.from_contents(schema)) for name, schema in _schemas().items()
    )
    return jsonschema.Draft202012Validator(_schemas()[kind], registry=registry)


@cache
def _vocabulary() -> tuple[str, ...]:
    """Every key any schema knows, to suggest the right spelling of a typo."""
    names: set[str] = set()

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            names.update(node.get("properties", {}))
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(_schemas())
    return tuple(sorted(names))


_UNEXPECTED = re.compile(r"'([^']+)'")


def check(source: Source, kind: str) -> None:
    """Raise ObsError listing every schema violation in `source`, each at its line."""
    errors = sorted(_validator(kind).iter_errors(source.data), key=lambda e: _line(source, e))
    if errors:
        raise ObsError(*(_problem(source, e) for e in errors[:_MAX_PROBLEMS]))


def _line(source: Source, error: jsonschema.ValidationError) -> int:
    return source.line_of(_path(error)) or 0


def _path(error: jsonschema.ValidationError) -> tuple[str | int, ...]:
    path = tuple(error.absolute_path)
    if error.validator in ("additionalProperties", "unevaluatedProperties"):
        unexpected = _unexpected(error)
        if unexpected:
            return (*path, unexpected[0])
    return path


def _unexpected(error: jsonschema.ValidationError) -> list[str]:
    if not isinstance(error.instance, dict):
        return []
    return [key for key in _UNEXPECTED.findall(error.message) if key in error.instance]


def _problem(source: Source, error: jsonschema.ValidationError) -> Problem:
    path = _path(error)
    where = {"file": source.path, "line": source.line_of(path), "key": dotted(path)}
    validator = error.validator
    if validator in ("additionalProperties", "unevaluatedProperties"):
        key = str(path[-1]) if path else "?"
        close = difflib.get_close_matches(key, _vocabulary(), n=1)
        fix = f"did you mean '{close[0]}'?" if close else "remove it or check the spelling"
        return Problem(what=f"unknown key '{key}'", fix=fix, **where)
    if validator == "required":
        return Problem(what=error.message.replace("property", "key"), fix="add it", **where)
    if validator == "type":
        expected = error.validator_value
        shown = " or ".join(expected) if isinstance(expected, list) else expected
        return Problem(
            what=f"expected {shown}, got {_kind_of(error.instance)} {_short(error.instance)}",
            fix=f"write a {shown} here",
            **where,
        )
    if validator == "enum":
        choices = ", ".join(json.dumps(v) for v in error.validator_value)
        return Problem(what=f"{_short(error.instance)} is not allowed", fix=f"use one of {choices}", **where)
    if validator == "pattern":
        return Problem(
            what=f"{_short(error.instance)} does not match {error.validator_value}",
            fix="use lowercase letters, digits and dashes as the pattern shows",
            **where,
        )
    if validator in ("minItems", "minProperties", "minLength"):
        return Problem(what="must not be empty", fix="add at least one entry", **where)
    return Problem(what=error.message, fix="see the schema for this file kind", **where)


def _kind_of(value: Any) -> str:
    return {
        bool: "boolean",
        int: "integer",
        float: "number",
        str: "string",
        list: "list",
        dict: "mapping",
        type(None): "nothing",
    }.get(type(value), type(value).__name__)


def _short(value: Any) -> str:
    text = json.dumps(value, default=str)
    return text if len(text) <= 60 else text[:57] + "..."
