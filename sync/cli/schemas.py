"""`obs schemas`: the JSON Schemas of the definition files, written out for editors."""

from __future__ import annotations

import argparse
from pathlib import Path

from sync.cli.conventions import Commands, Exit
from sync.definitions import schema


def register(commands: Commands) -> None:
    parser = commands.add_parser("schemas", help="write the JSON Schemas of the definition files, for editors")
    parser.add_argument("--out", required=True, type=Path, metavar="DIR")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    args.out.mkdir(parents=True, exist_ok=True)
    for name, text in schema.files().items():
        (args.out / name).write_text(text)
    print(f"wrote {len(schema.files())} schemas to {args.out}; point editors at them with a first line like")
    print(f"# yaml-language-server: $schema={args.out}/metric.schema.json")
    return Exit.OK
