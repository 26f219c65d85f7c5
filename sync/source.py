"""Read one YAML file into plain data plus a map from key path to line, rejecting what YAML lets slip."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeAlias

import yaml

from .errors import ObsError

KeyPath: TypeAlias = tuple[str | int, ...]


@dataclass(frozen=True)
class Source:
    """A loaded file: its data and where each key path sits in it (1-based lines)."""

    path: str
    data: Any
    lines: dict[KeyPath, int] = field(default_factory=dict, compare=False, repr=False)

    def line_of(self, path: KeyPath) -> int | None:
        """The line of the deepest known prefix of `path`."""
        for end in range(len(path), -1, -1):
            if path[:end] in self.lines:
                return self.lines[path[:end]]
        return None

    def error(self, path: KeyPath, what: str, fix: str = "") -> ObsError:
        return ObsError.of(what, fix, file=self.path, line=self.line_of(path), key=dotted(path))


def dotted(path: KeyPath) -> str:
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else part)
    return out


_constructor = yaml.constructor.SafeConstructor()
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml when PyYAML has it: several times faster


def _build(node: yaml.Node, path: KeyPath, lines: dict[KeyPath, int], file: str) -> Any:
    lines.setdefault(path, node.start_mark.line + 1)
    if isinstance(node, yaml.MappingNode):
        _constructor.flatten_mapping(node)  # resolve `<<` merge keys before checking duplicates
        out: dict[str, Any] = {}
        for key_node, value_node in node.value:
            key = _constructor.construct_object(key_node, deep=True)
            line = key_node.start_mark.line + 1
            if not isinstance(key, str):
                raise ObsError.of(f"key {key!r} is not text", "quote it", file=file, line=line, key=dotted(path))
            if key in out:
                raise ObsError.of(
                    f"duplicate key '{key}' (first on line {lines[(*path, key)]})",
                    "remove one of them; YAML would silently keep only the last",
                    file=file,
                    line=line,
                    key=dotted((*path, key)),
                )
            lines[(*path, key)] = line
            out[key] = _build(value_node, (*path, key), lines, file)
        return out
    if isinstance(node, yaml.SequenceNode):
        return [_build(item, (*path, i), lines, file) for i, item in enumerate(node.value)]
    return _constructor.construct_object(node, deep=True)


def parse(text: str, file: str) -> Source:
    """Parse YAML text; a syntax error names the line and column."""
    lines: dict[KeyPath, int] = {}
    try:
        node = yaml.compose(text, Loader=_LOADER)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark else None
        col = f" (column {mark.column + 1})" if mark else ""
        raise ObsError.of(
            f"YAML syntax error{col}: {exc.problem or exc.context}",
            "check indentation, quoting and colons on that line",
            file=file,
            line=line,
        ) from None
    except yaml.YAMLError as exc:
        raise ObsError.of(f"YAML error: {exc}", "fix the YAML syntax", file=file) from None
    if node is None:
        raise ObsError.of("the file is empty", "add its definitions or delete the file", file=file)
    try:
        data = _build(node, (), lines, file)
    except yaml.constructor.ConstructorError as exc:
        line = exc.problem_mark.line + 1 if exc.problem_mark else None
        raise ObsError.of(f"YAML error: {exc.problem}", "fix the value", file=file, line=line) from None
    return Source(path=file, data=data, lines=lines)


def read(path: Path, shown_as: str) -> Source:
    """Read and parse a file; `shown_as` is the name used in messages (relative to the definitions)."""
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise ObsError.of(f"cannot read the file: {exc.strerror}", "check the path", file=shown_as) from None
    if b"\x00" in raw:
        raise ObsError.of("not a text file", "definitions are YAML text; remove this file", file=shown_as)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ObsError.of(f"not UTF-8 text (byte {exc.start})", "save the file as UTF-8", file=shown_as) from None
    if not text.strip() or all(not line.strip() or line.lstrip().startswith("#") for line in text.splitlines()):
        raise ObsError.of("the file is empty", "add its definitions or delete the file", file=shown_as)
    return parse(text, shown_as)
