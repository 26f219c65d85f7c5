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

KINDS = ("queues", "environment", "metric", "dashboard", "settings", "scenario", "catalogue")
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
    schemas = {f"{name}.schema.json": schema for name, schema in _schemas().items()}
    flat = {name: _flattened(schema, name, schemas) for name, schema in schemas.items()}
    registry: Registry[Any] = Registry().with_resources(
        (name, Resource.from_contents(schema)) for name, schema in flat.items()
    )
    name = f"{kind}.schema.json"
    return jsonschema.Draft202012Validator(_inlined(flat[name], name, flat), registry=registry)


def _inlined(node: Any, doc: str, schemas: dict[str, Any], depth: int = 0) -> Any:
    """Every `$ref` replaced by what it points to: a reference costs a registry lookup each time a value is
    checked against it, thousands of times in a fleet's inventory. The schemas are not recursive."""
    if depth > 32:
        raise ValueError("the shipped schemas refer to themselves")  # a bug in the schemas, not in the input
    if isinstance(node, list):
        return [_inlined(item, doc, schemas, depth) for item in node]
    if not isinstance(node, dict):
        return node
    out = {key: _inlined(value, doc, schemas, depth) for key, value in node.items() if key != "$defs"}
    if isinstance(out.get("$ref"), str):
        target, target_doc = _resolved(out.pop("$ref"), doc, schemas)
        inlined = _inlined(target, target_doc, schemas, depth + 1)
        out = {**{k: v for k, v in inlined.items() if k != "$defs"}, **out}
    return out


def _flattened(node: Any, doc: str, schemas: dict[str, Any]) -> Any:
    """The schema with `unevaluatedProperties: false` over referenced object schemas turned into one object
    schema with `additionalProperties: false`: the same verdicts and messages, but unevaluatedProperties
    makes the validator re-check every subschema to learn which keys it evaluated, which took seconds on a
    fleet's inventory. The shipped files keep the composed form, for editors."""
    if isinstance(node, list):
        return [_flattened(item, doc, schemas) for item in node]
    if not isinstance(node, dict):
        return node
    out = {key: _flattened(value, doc, schemas) for key, value in node.items()}
    if out.get("unevaluatedProperties") is not False:
        return out
    parts = _parts(out, doc, schemas)
    if parts is None:
        return out
    merged = _merged(parts)
    if "$defs" in out:
        merged["$defs"] = out["$defs"]
    return merged


def _parts(out: dict[str, Any], doc: str, schemas: dict[str, Any]) -> list[tuple[Any, str]] | None:
    """The schema's own keys and each schema it references, with the document each is in; None when one of
    them cannot be merged (then the composed form stays)."""
    parts = [({k: v for k, v in out.items() if k not in ("allOf", "$ref", "unevaluatedProperties")}, doc)]
    refs = [out["$ref"]] if "$ref" in out else []
    refs += [sub["$ref"] for sub in out.get("allOf", []) if set(sub) == {"$ref"}]
    if len(refs) != (1 if "$ref" in out else 0) + len(out.get("allOf", [])):
        return None  # an allOf entry that is not a plain reference
    for ref in refs:
        target, target_doc = _resolved(ref, doc, schemas)
        if not isinstance(target, dict) or set(target) - _MERGEABLE:
            return None
        parts.append((target, target_doc))
    return parts


def _merged(parts: list[tuple[Any, str]]) -> dict[str, Any]:
    """One object schema with the properties of all the parts, closed to any other key."""
    merged: dict[str, Any] = {"type": "object", "properties": {}, "additionalProperties": False}
    for part, part_doc in parts:
        absolute = _absolute_refs(part, part_doc)
        merged["properties"].update(absolute.get("properties", {}))
        for key in ("required",):
            if key in absolute:
                merged[key] = sorted({*merged.get(key, []), *absolute[key]})
        if "dependentSchemas" in absolute:
            merged.setdefault("dependentSchemas", {}).update(absolute["dependentSchemas"])
        for key, value in absolute.items():
            if key not in ("properties", "required", "dependentSchemas", "type", "$defs"):
                merged.setdefault(key, value)
    return merged


# What a referenced schema may hold for its keys to be merged into the referring one.
_MERGEABLE = {"type", "properties", "required", "dependentSchemas", "description", "title", "$schema", "$defs"}


def _resolved(ref: str, doc: str, schemas: dict[str, Any]) -> tuple[Any, str]:
    name, _, pointer = ref.partition("#")
    name = name or doc
    target = schemas[name]
    for part in filter(None, pointer.split("/")):
        target = target[part]
    if isinstance(target, dict) and "$ref" in target and target.get("unevaluatedProperties") is False:
        target = _flattened(target, name, schemas)  # a whole settings document: its own fields, flattened
    return target, name


def _absolute_refs(node: Any, doc: str) -> Any:
    """References made absolute, so that keys moved into another document still point where they did."""
    if isinstance(node, list):
        return [_absolute_refs(item, doc) for item in node]
    if not isinstance(node, dict):
        return node
    return {
        key: (
            f"{doc}{value}"
            if key == "$ref" and isinstance(value, str) and value.startswith("#")
            else _absolute_refs(value, doc)
        )
        for key, value in node.items()
    }


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
        close = difflib.get_close_matches(key, _vocabulary(), n=2)
        if close and close[0] == key:
            # A key of another file or place: a near one of this place may be what was meant (threshold).
            here = [k for k in _keys_here(error) if k != key]
            near = difflib.get_close_matches(key, here, n=1)
            fix = f"did you mean '{near[0]}'? if not, remove it" if near else "remove it"
            return f"'{key}' cannot be set here", f"{fix}; see the README for what each file may set"
        return f"unknown key '{key}'", f"did you mean '{close[0]}'?" if close else "remove it or check the spelling"
    if validator == "required":
        return error.message.replace("property", "key"), "add it"
    if validator == "type":
        shown = " or ".join(expected) if isinstance(expected, list) else str(expected)
        article = "an" if shown[0] in "aeiou" else "a"
        what = f"expected {shown}, got {_kind_of(error.instance)} {_short(error.instance)}".rstrip()
        if expected == "string" and type(error.instance) in (int, float):
            # An ID or a version written bare: YAML made it a number, dropping any leading zeros.
            fix = cast(Any, error.schema).get("x-fix", "write it in quotes")
            return what, f"YAML reads unquoted digits as a number (and drops leading zeros): {fix}"
        return what, f"write {article} {shown} here"
    if validator == "enum":
        choices = "one of " + ", ".join(json.dumps(v) for v in expected)
        close = difflib.get_close_matches(str(error.instance), [str(v) for v in expected], n=1)
        fix = f"did you mean {json.dumps(close[0])}? else use {choices}" if close else f"use {choices}"
        return f"{_short(error.instance)} is not allowed", fix
    if validator == "pattern":
        fix = cast(Any, error.schema).get("x-fix", f"write it to match {expected}")
        return f"{_short(error.instance)} is not allowed here", fix
    if validator in ("minItems", "minProperties", "minLength"):
        return "must not be empty", "add at least one entry"
    if validator in ("oneOf", "anyOf") and "x-fix" in cast(Any, error.schema):
        return f"{_short(error.instance)} has none of the allowed forms", cast(Any, error.schema)["x-fix"]
    return error.message, "see the schema for this file kind"


def _keys_here(error: jsonschema.ValidationError) -> list[str]:
    """The keys the schema that refused a key allows at that place (its own and its allOf parts')."""
    schema = cast(Any, error.schema)
    if not isinstance(schema, dict):
        return []
    parts = [schema, *(p for p in schema.get("allOf", ()) if isinstance(p, dict))]
    return [key for part in parts for key in part.get("properties", {})]


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
