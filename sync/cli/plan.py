"""`obs plan`: what a sync would change in the live org, or in an empty one offline."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from sync.cli import approval, colour, live
from sync.cli.conventions import SUMMARIES, Commands, Exit, detailed_exitcode_option, format_option
from sync.cli.desired import loaded, resources
from sync.core.plan import make_plan
from sync.errors import ObsError
from sync.report import changes, saved_plan


def register(commands: Commands) -> None:
    parser = commands.add_parser("plan", help=SUMMARIES["plan"])
    parser.add_argument("--env", required=True, help="the environment to plan")
    parser.add_argument("--offline", action="store_true", help="plan against an empty org, without credentials")
    parser.add_argument(
        "--out",
        type=Path,
        metavar="FILE",
        help="also write the plan to FILE, for approval: `obs sync --plan FILE` applies exactly it",
    )
    format_option(parser)
    detailed_exitcode_option(parser, "changes are pending")
    live.options(parser, adopt=True)
    parser.add_argument(
        "--live",
        action="store_true",
        help="first read the live AWS settings the monitors depend on (retention, DLQs) with the read-only checks "
        "of obs audit, and print what differs before the plan",
    )
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    defs, env = loaded(args.definitions, args.env)
    if args.offline and args.out is not None:
        raise ObsError.of("--out needs the live org: a plan made offline cannot be approved", "drop --offline")
    if args.live:  # on stderr, so --format json stays one document on stdout
        # The audit's checks and report: loaded for --live alone (a tenth of a second of every plan's start).
        from sync.cli import audit  # noqa: PLC0415

        sys.stderr.write(audit.monitored_report(defs, env))
        sys.stderr.flush()
    bound, made = None, approval.now()  # the plan's age counts from before its live reads
    if args.offline:
        found, against = make_plan(args.env, resources(defs, env), live=()), "an empty org (offline)"
    else:
        without = "add --offline to plan against an empty org"
        with live.reaching(defs, env, timeout=args.timeout, verbose=args.verbose, without=without) as dd:
            bound = approval.binding(dd, args.definitions) if args.out is not None else None
            _, found, against = live.planned(dd, defs, env, adopt=args.adopt)
    if args.out is not None and bound is not None:  # bound whenever --out is given
        try:
            args.out.write_text(saved_plan.dump(found, bound, made), encoding="utf-8")
        except OSError as exc:
            raise ObsError.of(f"cannot write the plan to {args.out}: {exc.strerror}", "check the path") from None
    sys.stdout.write(changes.render(found, args.format, against=against, colour=colour.enabled(args)))
    return Exit.CHANGES if args.detailed_exitcode and found.pending else Exit.OK
