"""`obs links`: where the person on call looks for each queue, with IDs from the live org."""

from __future__ import annotations

import argparse
import sys

from sync.cli import live
from sync.cli.conventions import SUMMARIES, Commands, Exit, format_option
from sync.cli.desired import loaded, resources
from sync.core.kinds import Kind
from sync.core.plan import Action
from sync.expand import oncall
from sync.report import links as sheets


def register(commands: Commands) -> None:
    parser = commands.add_parser("links", help=SUMMARIES["links"])
    parser.add_argument("--env", required=True, help="the environment")
    parser.add_argument(
        "--queue",
        metavar="NAME",
        help="only this queue: its logical name (critical) or the AWS name an alert shows (prod-critical)",
    )
    format_option(parser)
    parser.add_argument("--offline", action="store_true", help="without credentials: dashboard IDs as placeholders")
    live.options(parser, adopt=False)
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    defs, env = loaded(args.definitions, args.env)
    placed = oncall.chosen(defs, env, args.queue)  # an unknown queue is an error before any call
    ids: dict[tuple[Kind, str], str] = {}
    source = "nowhere (offline): dashboard links hold placeholders, monitors have no page yet"
    if args.offline:
        desired = resources(defs, env)
    else:
        without = "add --offline for links with placeholders for the dashboard IDs"
        with live.reaching(defs, env, timeout=args.timeout, verbose=args.verbose, without=without) as dd:
            # Links show the objects obs manages already: look-alikes `sync --adopt` would take over are not yet.
            desired, found, source = live.planned(dd, defs, env, adopt=False)
        # The objects a sync keeps; duplicates and orphans it would delete are not worth a link.
        ids = {(c.kind, c.key): c.id for c in found.changes if c.id and c.action != Action.DELETE}
    sheet = oncall.sheet(defs, env, desired, ids, placed)
    sys.stdout.write(sheets.render(sheet, args.format, source=source, offline=args.offline))
    return Exit.OK
