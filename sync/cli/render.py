"""`obs render`: each resource's exact API request body, written as JSON."""

from __future__ import annotations

import argparse
import os
from collections.abc import Sequence
from pathlib import Path
from typing import NamedTuple

from sync.cli import expanding
from sync.cli.conventions import SUMMARIES, Commands, Exit
from sync.cli.desired import counted
from sync.core import placeholders
from sync.core.body_text import body_bytes
from sync.core.keys import Key
from sync.core.kinds import KINDS
from sync.core.resources import Resource
from sync.definitions.load import load


def register(commands: Commands) -> None:
    parser = commands.add_parser("render", help=SUMMARIES["render"])
    parser.add_argument("--env", help="the environment to render (default: every one, each to DIR/<env>)")
    parser.add_argument(
        "--out", required=True, type=Path, metavar="DIR", help="writes DIR/monitors, DIR/dashboards and DIR/slos"
    )
    parser.set_defaults(handler=run)


class Rendered(NamedTuple):
    """An environment's bodies as they are written: (file under the output folder, its bytes), in order."""

    files: list[tuple[str, bytes]]
    said: str  # what was written, per kind
    awaited: bool  # whether a body holds a placeholder that a sync fills in


def run(args: argparse.Namespace) -> int:
    defs = load(args.definitions)
    envs = [defs.environment(args.env)] if args.env else defs.environments
    rendered = expanding.checked(defs, envs, _rendered)  # all or nothing is written
    for env, done in rendered.items():
        out = args.out if args.env else args.out / env
        _write(out, done.files)
        print(f"wrote {done.said} to {out}")
    if any(done.awaited for done in rendered.values()):
        print(f"note: {placeholders.PLACEHOLDER_NOTE}")
    return Exit.OK


def _rendered(resources: Sequence[Resource]) -> Rendered:
    """Worked out where the environment was expanded: bytes travel back from a process faster than resources."""
    files = [(file_name(r), body_bytes(r.body)) for r in resources]
    # The texts say it as well as the bodies, and sooner: the first monitor's message already links to the dashboard.
    awaited = any(placeholders.awaits(text.decode()) for _, text in files)
    return Rendered(files, counted(resources), awaited)


def file_name(resource: Resource) -> str:
    """Where a resource's body is written, below its environment's output folder."""
    return f"{resource.kind.plural}{os.sep}{Key.of(resource.key).file_stem}.json"


_WRITE = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_BINARY", 0)  # bytes as they are, on Windows too


def _write(out: Path, files: list[tuple[str, bytes]]) -> None:
    # Paths as strings and raw descriptors: a fleet writes tens of thousands of files, and a Path or a buffered
    # file (which asks the file system three more things) costs more than the write.
    texts = {f"{out}{os.sep}{name}": text for name, text in files}
    present: set[str] = set()  # only these are read first: a fresh output folder costs one listing, not a read each
    for kind in KINDS:
        folder = out / kind.plural
        folder.mkdir(parents=True, exist_ok=True)
        with os.scandir(folder) as entries:
            for entry in entries:
                if entry.name.endswith(".json") and entry.is_file():
                    if entry.path in texts:
                        present.add(entry.path)
                    else:  # a removed resource must not linger in the output
                        Path(entry.path).unlink()
    for path, text in texts.items():  # resources come sorted by kind and key
        if path in present and _read(path) == text:
            continue  # a file left as it was keeps its time: a re-render touches only what changed
        file = os.open(path, _WRITE, 0o666)
        try:
            left = memoryview(text)
            while left:  # a write may take less than it is given
                left = left[os.write(file, left) :]
        finally:
            os.close(file)


def _read(path: str) -> bytes:
    with open(path, "rb") as file:  # noqa: PTH123 (a string path, as above)
        return file.read()
