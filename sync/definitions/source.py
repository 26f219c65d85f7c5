"""Read one YAML file into plain data plus a map from key path to line, rejecting what YAML lets slip."""

from __future__ import annotations

import math
import os
import re
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeAlias

import yaml

from sync.errors import ObsError

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


_PART = re.compile(r"([^.\[\]]+)|\[(\d+)\]")


def undotted(path: str) -> KeyPath:
    """The key path of a dotted one: `widgets[0].definition` -> ("widgets", 0, "definition")."""
    return tuple(int(index) if index else name for name, index in _PART.findall(path))


_constructor = yaml.constructor.SafeConstructor()
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml when PyYAML has it: several times faster


_MAX_VALUES = 1_000_000  # aliases can make a small file expand without bound ("billion laughs")
# The deepest definitions (dashboard widgets in groups) nest about 12 levels; far deeper is a mistake or an
# attack, and everything after loading walks the data recursively.
MAX_DEPTH = 64
# Datadog's API carries numbers as JSON doubles: integers past 2**53 are no longer exact there.
MAX_NUMBER = 2**53


class _Builder:
    """Plain data from a YAML node tree, recording lines and refusing silent duplicate keys."""

    def __init__(self, file: str) -> None:
        self.file = file
        self.lines: dict[KeyPath, int] = {}
        self.values = 0
        self.open: set[int] = set()  # the lists and mappings being built, to catch an alias inside itself

    def build(self, node: yaml.Node, path: KeyPath) -> Any:
        self.values += 1
        if self.values > _MAX_VALUES:
            raise ObsError.of(
                f"the file expands to more than {_MAX_VALUES:,} values", "use fewer YAML aliases", file=self.file
            )
        self.lines.setdefault(path, node.start_mark.line + 1)
        if isinstance(node, yaml.MappingNode | yaml.SequenceNode):
            if id(node) in self.open:
                raise self._error(
                    node,
                    path,
                    "a YAML alias refers to a list or mapping that contains it",
                    "the data would be infinite: remove the alias (*name) inside its own anchor (&name)",
                )
            if len(path) >= MAX_DEPTH:
                raise self._error(
                    node,
                    path,
                    f"lists and mappings nest more than {MAX_DEPTH} levels deep",
                    "flatten the structure; no definition needs that depth",
                )
            self.open.add(id(node))
            try:
                if isinstance(node, yaml.MappingNode):
                    return self._mapping(node, path)
                return [self.build(item, (*path, i)) for i, item in enumerate(node.value)]
            finally:
                self.open.discard(id(node))
        value = _constructor.construct_object(node, deep=True)
        if isinstance(value, float) and not math.isfinite(value):
            raise self._error(node, path, f"{node.value} is not a finite number", "write a plain number")
        if isinstance(value, int | float) and not isinstance(value, bool) and abs(value) > MAX_NUMBER:
            shown = node.value if len(node.value) <= 24 else node.value[:20] + "..."
            raise self._error(
                node, path, f"the number {shown} is too large", f"write a number of at most {MAX_NUMBER:,} in magnitude"
            )
        return value

    def _error(self, node: yaml.Node, path: KeyPath, what: str, fix: str) -> ObsError:
        key = dotted(path) if len(path) <= 8 else dotted(path[:8]) + "..."  # a deep path is unreadable in full
        return ObsError.of(what, fix, file=self.file, line=node.start_mark.line + 1, key=key)

    def _mapping(self, node: yaml.MappingNode, path: KeyPath) -> dict[str, Any]:
        explicit = len([k for k, _ in node.value if k.tag != "tag:yaml.org,2002:merge"])
        _constructor.flatten_mapping(node)  # `<<` merge keys first, then the mapping's own keys
        merged = len(node.value) - explicit
        out: dict[str, Any] = {}
        from_merge: set[str] = set()
        for index, (key_node, value_node) in enumerate(node.value):
            line = key_node.start_mark.line + 1
            if not isinstance(key_node, yaml.ScalarNode):  # a list or mapping as a key, never text
                raise ObsError.of(
                    "a key is a list or mapping", "keys are plain text", file=self.file, line=line, key=dotted(path)
                )
            key = _constructor.construct_object(key_node, deep=True)
            if not isinstance(key, str):
                raise ObsError.of(f"key {key!r} is not text", "quote it", file=self.file, line=line, key=dotted(path))
            if key in out and key not in from_merge:
                raise ObsError.of(
                    f"duplicate key '{key}' (first on line {self.lines[(*path, key)]})",
                    "remove one of them; YAML would silently keep only the last",
                    file=self.file,
                    line=line,
                    key=dotted((*path, key)),
                )
            # A key of the mapping's own overrides one merged in with `<<`, as YAML intends.
            (from_merge.add if index < merged else from_merge.discard)(key)
            self.lines[(*path, key)] = line
            out[key] = self.build(value_node, (*path, key))
        return out


def parse(text: str, file: str) -> Source:
    """Parse YAML text; a syntax error names the line and column."""
    try:
        node = yaml.compose(text, Loader=_LOADER)
    except RecursionError:  # the pure-Python parser recurses once per level (libyaml stops at 1,000 itself)
        raise ObsError.of(
            f"lists and mappings nest more than {MAX_DEPTH} levels deep", "flatten the structure", file=file
        ) from None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark else None
        col = f" (column {mark.column + 1})" if mark else ""
        lines = text.splitlines()
        tab = mark is not None and mark.line < len(lines) and "\t" in lines[mark.line][: mark.column + 1]
        raise ObsError.of(
            f"YAML syntax error{col}: {exc.problem or exc.context}",
            "YAML does not allow tabs for indentation: use spaces"
            if tab
            else "check indentation, quoting and colons on that line",
            file=file,
            line=line,
        ) from None
    except yaml.YAMLError as exc:
        raise ObsError.of(f"YAML error: {exc}", "fix the YAML syntax", file=file) from None
    if node is None:
        raise ObsError.of("the file is empty", "add its definitions or delete the file", file=file)
    try:
        builder = _Builder(file)
        data = builder.build(node, ())
    except yaml.constructor.ConstructorError as exc:
        line = exc.problem_mark.line + 1 if exc.problem_mark else None
        raise ObsError.of(f"YAML error: {exc.problem}", "fix the value", file=file, line=line) from None
    return Source(path=file, data=data, lines=builder.lines)


def read(path: Path, shown_as: str) -> Source:
    """Read and parse a file; `shown_as` is the name used in messages (relative to the definitions)."""
    return parse(text_of(path, shown_as), shown_as)


def text_of(path: Path, shown_as: str) -> str:
    """A definition file's text: a regular file, UTF-8, not empty."""
    try:
        raw = _regular_file_bytes(path, shown_as)
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
    return text


def _regular_file_bytes(path: Path, shown_as: str) -> bytes:
    """The bytes of a regular file; a named pipe or a device would block the read or never end, so it is
    refused. Opened without blocking (a FIFO open waits for a writer) and checked again once open."""
    _require_regular(path.stat().st_mode, shown_as)
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0))
    with os.fdopen(fd, "rb") as handle:
        _require_regular(os.fstat(handle.fileno()).st_mode, shown_as)  # swapped between stat and open
        return handle.read()


def _require_regular(mode: int, shown_as: str) -> None:
    if not stat.S_ISREG(mode):
        kind = "a folder" if stat.S_ISDIR(mode) else "a named pipe" if stat.S_ISFIFO(mode) else "a device or socket"
        raise ObsError.of(
            f"{kind}, not a regular file", "definitions are plain YAML files: replace it with one", file=shown_as
        )
