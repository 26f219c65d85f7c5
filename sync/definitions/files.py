"""Read the definition files of a folder: each parsed and checked against its schema, named like its file;
the problems of many files collected, so one run reports them all."""

from __future__ import annotations

import pickle
from collections.abc import Callable
from functools import lru_cache, partial
from pathlib import Path

from sync.definitions import schema
from sync.definitions.source import Source, parse, text_of
from sync.errors import ObsError, Problem, Problems


def read_checked(root: Path, relative: str, kind: str) -> Source:
    data, lines = pickle.loads(_checked(text_of(root / relative, relative), relative, kind))  # noqa: S301 (ours)
    return Source(relative, data, lines)


@lru_cache(maxsize=1024)
def _checked(text: str, relative: str, kind: str) -> bytes:
    """A file's data and lines, parsed and checked against its schema once per text: a process that reads the
    same file again (`obs diff` reads most files twice, base and head; a test suite reads its fixtures
    hundreds of times) skips both. Pickled, so that every reader gets data of its own to keep or change."""
    source = parse(text, relative)
    if not isinstance(source.data, dict):
        raise ObsError.of("expected a mapping of keys at the top", "see the example definitions", file=relative, line=1)
    schema.check(source, kind)
    return pickle.dumps((source.data, source.lines))


def in_folder(root: Path, folder: str, kind: str, problems: Problems, optional: bool = False) -> list[Source]:
    """The files of the folder that read and pass their schema; the problems of the others go to `problems`.
    `optional` when the folder may be empty or absent."""
    files = (
        sorted(p for p in (root / folder).glob("*") if p.suffix in (".yaml", ".yml"))
        if (root / folder).is_dir()
        else []
    )
    if not files and not optional:
        problems.add(
            Problem(
                f"no {kind} definitions in {folder}/",
                f"add at least one {folder}/<name>.yaml, or use the catalogue shipped with obs (catalogue.yaml)",
            )
        )
    sources = []
    for path in files:
        sources += collecting(problems, partial(_each, root, folder, kind, path, files))
    return sources


def _each(root: Path, folder: str, kind: str, path: Path, files: list[Path]) -> list[Source]:
    relative = f"{folder}/{path.name}"
    twins = [p.name for p in files if p.stem == path.stem and p != path]
    if twins:
        raise ObsError.of(
            f"{kind} '{path.stem}' is defined twice, also in {folder}/{twins[0]}",
            "keep one of the two files",
            file=relative,
        )
    source = read_checked(root, relative, kind)
    if source.data["name"] != path.stem:
        raise source.error(
            ("name",),
            f"name '{source.data['name']}' differs from the file name",
            f"rename one to '{path.stem}'",
        )
    return [source]


def collecting(problems: Problems, read: Callable[[], list[Source]]) -> list[Source]:
    """What `read` returns; its problems go to `problems` instead of stopping the load."""
    return problems.attempt(read) or []


def in_optional_folder(root: Path, folder: str, kind: str, problems: Problems) -> list[Source]:
    """Like in_folder, for a folder the definitions may leave out; its file names need not be `name`s."""
    files = (
        sorted(p for p in (root / folder).glob("*") if p.suffix in (".yaml", ".yml"))
        if (root / folder).is_dir()
        else []
    )
    sources = []
    for path in files:
        relative = f"{folder}/{path.name}"
        twins = [p.name for p in files if p.stem == path.stem and p != path]
        if twins:
            what = f"{kind} '{path.stem}' is defined twice, also in {folder}/{twins[0]}"
            problems.add(Problem(what, "keep one of the two files", file=relative))
            continue
        sources += collecting(problems, partial(_one, root, relative, kind))
    return sources


def _one(root: Path, relative: str, kind: str) -> list[Source]:
    return [read_checked(root, relative, kind)]


def failed(root: Path, folder: str, loaded: list[Source]) -> set[str]:
    """The names of the files in `folder` that did not load: those that failed their own checks."""
    names = (
        {p.stem for p in (root / folder).glob("*") if p.suffix in (".yaml", ".yml")}
        if (root / folder).is_dir()
        else set()
    )
    return names - {s.data["name"] for s in loaded}
