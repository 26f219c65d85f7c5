"""`obs render`: each resource's exact API request body, written as JSON."""

from __future__ import annotations

import argparse
import os
from collections.abc import Sequence
from pathlib import Path

from sync.cli import expanding
from sync.cli.conventions import Commands, Exit
from sync.cli.desired import counted
from sync.core import placeholders
from sync.core.body_text import body_text
from sync.core.keys import Key
from sync.core.kinds import KINDS
from sync.core.resources import Resource
from sync.definitions.load import load


def register(commands: Commands) -> None:
    parser = commands.add_parser("render", help="write each resource's exact API request body as JSON")
    parser.add_argument("--env", help="the environment to render (default: every one, each to DIR/<env>)")
    parser.add_argument(
        "--out", required=True, type=Path, metavar="DIR", help="writes DIR/monitors, DIR/dashboards and DIR/slos"
    )
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    defs = load(args.definitions)
    envs = [defs.environment(args.env)] if args.env else defs.environments
    rendered = expanding.checked(defs, envs)  # all or nothing is written
    for env, resources in rendered.items():
        out = args.out if args.env else args.out / env
        _write_bodies(out, resources)
        print(f"wrote {counted(resources)} to {out}")
    if placeholders.awaited(r.body for resources in rendered.values() for r in resources):
        print(f"note: {placeholders.PLACEHOLDER_NOTE}")
    return Exit.OK


def _write_bodies(out: Path, resources: Sequence[Resource]) -> None:
    # Paths as strings: a fleet writes tens of thousands of files, and a Path costs more than the write.
    files = {f"{out}{os.sep}{r.kind.plural}{os.sep}{Key.of(r.key).file_stem}.json": r for r in resources}
    for kind in KINDS:
        folder = out / kind.plural
        folder.mkdir(parents=True, exist_ok=True)
        for stale in folder.glob("*.json"):  # a removed resource must not linger in the output
            if str(stale) not in files:
                stale.unlink()
    for path, resource in files.items():  # resources come sorted by kind and key
        text = body_text(resource.body).encode()
        if _read(path) != text:  # a file left as it was keeps its time: a re-render touches only what changed
            with open(path, "wb") as file:  # noqa: PTH123 (a string path, as above)
                file.write(text)


def _read(path: str) -> bytes | None:
    try:
        with open(path, "rb") as file:  # noqa: PTH123 (a string path, as above)
            return file.read()
    except FileNotFoundError:
        return None
