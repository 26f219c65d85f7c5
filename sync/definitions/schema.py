"""Check a loaded file against the JSON Schema shipped for its kind, reporting file:line and a fix."""

from __future__ import annotations

import difflib
import json
import re
from functools import cache
from importlib import resources
from typing import Any, cast

import jsonschema
from referencing import Registry, Resource

from sync.definitions.source import Source, dotted
from sync.errors import ObsError, Problem

KINDS = ("queues", "environment", "metric", "dashboard", "settings")
_MAX_PROBLEMS = 10


@cache
def files() -> dict[str, str]:
    """The shipped schema files by name, as text."""
    folder = resources.files("sync.definitions") / "schemas"
    return {f"{kind}.schema.json": (folder / f"{kind}.schema.json").read_text() for kind in KINDS}


@cache
def _schemas() -> dict[str, dict[str, Any]]:
    return {name.removesuffix(".schema.json"): json.loads(text) for name, text in files().items()}


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
    errors = _without_echoes(list(_validator(kind).iter_errors(source.data)))
    errors.sort(key=lambda e: _line(source, e))
    if errors:
        raise ObsError(*(_problem(source, e) for e in errors[:_MAX_PROBLEMS]))


def _without_echoes(errors: list[jsonschema.ValidationError]) -> list[jsonschema.ValidationError]:
    """Drop 'unevaluated' errors caused by another error in the same object: a failed subschema
    evaluates none of its keys, so every valid key there would be reported as unknown too."""

    def echoes(error: jsonschema.ValidationError) -> bool:
        if error.validator != "unevaluatedProperties":
            return False
        at = tuple(error.absolute_path)
        return any(
            other is not error
            and other.validator != "unevaluatedProperties"
            and len(other.absolute_path) > len(at)
            and tuple(other.absolute_path)[: len(at)] == at
            for other in errors
        )

    return [e for e in errors if not echoes(e)]


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
    what, fix = _explain(error, path)
    return Problem(what=what, fix=fix, file=source.path, line=source.line_of(path), key=dotted(path))


def _explain(error: jsonschema.ValidationError, path: tuple[str | int, ...]) -> tuple[str, str]:
    validator, expected = error.validator, cast(Any, error.validator_value)
    if validator in ("additionalProperties", "unevaluatedProperties"):
        key = str(path[-1]) if path else "?"
        close = difflib.get_close_matches(key, _vocabulary(), n=1)
        if close and close[0] == key:
            return f"'{key}' cannot be set here", "remove it; see the README for what each file may set"
        return f"unknown key '{key}'", f"did you mean '{close[0]}'?" if close else "remove it or check the spelling"
    if validator == "required":
        return error.message.replace("property", "key"), "add it"
    if validator == "type":
        shown = " or ".join(expected) if isinstance(expected, list) else str(expected)
        article = "an" if shown[0] in "aeiou" else "a"
        return (
            f"expected {shown}, got {_kind_of(error.instance)} {_short(error.instance)}".rstrip(),
            f"write {article} {shown} here",
        )
    if validator == "enum":
        return f"{_short(error.instance)} is not allowed", "use one of " + ", ".join(json.dumps(v) for v in expected)
    if validator == "pattern":
        fix = cast(Any, error.schema).get("x-fix", f"write it to match {expected}")
        return f"{_short(error.instance)} is not allowed here", fix
    if validator in ("minItems", "minProperties", "minLength"):
        return "must not be empty", "add at least one entry"
    return error.message, "see the schema for this file kind"


def _kind_of(value: Any) -> str:
    return {
        bool: "boolean",
        int: "integer",
        float: "number",
        str: "string",
        list: "list",
        dict: "mapping",
        type(None): "null",
    }.get(type(value), type(value).__name__)


def _short(value: Any) -> str:
    if value is None:
        return ""
    text = json.dumps(value, default=str, ensure_ascii=False)
    return text if len(text) <= 60 else text[:57] + "..."
