"""`obs schemas`: the JSON Schemas of the definition files, written out for editors."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from sync.cli.conventions import SUMMARIES, Commands, Exit
from sync.definitions import schema

# Where each kind of definition file lives in a definitions folder, and the schema that checks it.
_PLACES = (
    ("queues.yaml", "queues"),
    ("environments/*.yaml", "environment"),
    ("monitors/*.yaml", "metric"),
    ("dashboards/*.yaml", "dashboard"),
    ("scenarios/*.yaml", "scenario"),
)


def register(commands: Commands) -> None:
    parser = commands.add_parser("schemas", help=SUMMARIES["schemas"])
    parser.add_argument("--out", required=True, type=Path, metavar="DIR")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    args.out.mkdir(parents=True, exist_ok=True)
    for name, text in schema.files().items():
        (args.out / name).write_text(text)
    print(f"wrote {len(schema.files())} schemas to {args.out}; point editors at them with a first line like these")
    for pattern, kind in _PLACES:
        print(
            f"  {pattern:<20} # yaml-language-server: $schema={schema_path(args.definitions, pattern, args.out, kind)}"
        )
    return Exit.OK


def schema_path(definitions: Path, pattern: str, out: Path, kind: str) -> str:
    """The schema's path as a file at `pattern` in the definitions folder must write it: relative to that file's
    folder (a file in monitors/ needs ../), so the line stays right wherever the repository is checked out."""
    folder = (definitions / pattern).parent
    relative = os.path.relpath(Path.cwd() / out / f"{kind}.schema.json", Path.cwd() / folder)
    return Path(relative).as_posix()
