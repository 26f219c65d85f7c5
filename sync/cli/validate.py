"""`obs validate`: every definition in every environment, checked offline."""

from __future__ import annotations

import argparse
import sys

from sync.check import accepted
from sync.cli.conventions import Commands, Exit
from sync.cli.desired import counted
from sync.definitions.load import load
from sync.definitions.maintenance import stale


def register(commands: Commands) -> None:
    parser = commands.add_parser("validate", help="check every definition in every environment, offline")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    defs = load(args.definitions)
    rendered = accepted.expand_checked(defs)
    for warning in stale(defs):
        print(f"warning: {warning}", file=sys.stderr)
    counts = ", ".join(f"{env}: {counted(resources)}" for env, resources in rendered.items())
    scenarios = f"{len(defs.scenarios)} scenarios, " if defs.scenarios else ""
    print(
        f"ok: {len(defs.queues)} queues, {len(defs.metrics)} metrics, {scenarios}"
        f"{len(defs.environments)} environments ({counts})"
    )
    return Exit.OK
