"""`obs sync`: print the plan, check the guards, then make the live org match the definitions."""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from sync.cli import approval, colour, live
from sync.cli.conventions import SUMMARIES, Commands, Exit
from sync.cli.desired import loaded
from sync.core import guard
from sync.core.outcome import Outcome
from sync.datadog import apply
from sync.datadog.client import Datadog
from sync.definitions.model import Definitions, Environment
from sync.errors import ObsError
from sync.report import changes, saved_plan


def register(commands: Commands) -> None:
    parser = commands.add_parser("sync", help=SUMMARIES["sync"])
    parser.add_argument("--env", required=True, help="the environment to sync")
    parser.add_argument(
        "--dry-run", action="store_true", help="check every changed monitor with the API; write nothing"
    )
    parser.add_argument("--no-delete", action="store_true", help="leave orphans and duplicates in place")
    parser.add_argument(
        "--allow-mass-delete",
        action="store_true",
        # argparse formats help with %, so the percent sign of the share is doubled.
        help=f"delete more than the limit of {guard.MIN_DELETE_LIMIT}-{guard.MAX_DELETE_LIMIT} objects "
        f"({guard.DELETE_SHARE:.0%}% of the managed ones)",
    )
    parser.add_argument(
        "--max-deletes", type=live.count_between(0, 1_000_000), metavar="N", help="the most orphans one sync may delete"
    )
    parser.add_argument(
        "--concurrency", type=live.count_between(1, 32), default=8, metavar="N", help="writes in flight (default 8)"
    )
    parser.add_argument(
        "--plan",
        type=Path,
        metavar="FILE",
        help="apply exactly the plan `obs plan --out FILE` wrote, refusing if the live org changed since, or if "
        "the file was made for another org, host, environment or definitions commit",
    )
    parser.add_argument(
        "--max-age",
        type=approval.max_age,
        default=approval.max_age(approval.DEFAULT_MAX_AGE),
        metavar="DURATION",
        help=f"refuse a --plan file older than this (default {approval.DEFAULT_MAX_AGE}), e.g. 90m, 2d",
    )
    parser.add_argument("--yes", action="store_true", help="apply without asking (a terminal asks first)")
    live.options(parser, adopt=True)
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    approved = _approved(args.plan)
    if approved is not None and (found := saved_plan.out_of_place(approved, args.env, approval.now(), args.max_age)):
        raise saved_plan.refusal(str(args.plan), found, changed=False)
    defs, env = loaded(args.definitions, args.env)
    started = time.monotonic()
    without = f"see what a sync would change in an empty org with obs plan --env {env.name} --offline"
    connection = live.reaching(
        defs, env, timeout=args.timeout, verbose=args.verbose, workers=args.concurrency, without=without
    )
    with connection as dd:
        applied = _apply(args, dd, defs, env, approved)
    if applied is None:
        return Exit.OK
    outcomes, unchecked = applied
    seconds = time.monotonic() - started
    sys.stdout.write(changes.outcomes(outcomes, dry_run=args.dry_run, seconds=seconds, unchecked=unchecked))
    return Exit.ERROR if any(not o.ok for o in outcomes) else Exit.OK


def _approved(path: Path | None) -> Mapping[str, Any] | None:
    if path is None:
        return None
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ObsError.of(f"cannot read the plan file {path}: {exc}", "give the file obs plan --out wrote") from None
    return saved_plan.load(text, str(path))


def _apply(
    args: argparse.Namespace, dd: Datadog, defs: Definitions, env: Environment, approved: Mapping[str, Any] | None
) -> tuple[list[Outcome], int] | None:
    """Print the plan, check the guards, then apply (or validate) it; None when there is nothing to do. With
    the outcomes, how many changes a dry run could not put to the API."""
    if approved is not None and (found := saved_plan.elsewhere(approved, approval.binding(dd, args.definitions))):
        raise saved_plan.refusal(str(args.plan), found, changed=False)
    desired, plan, against = live.planned(dd, defs, env, adopt=args.adopt)
    if approved is not None and (found := saved_plan.differences(approved, plan)):
        raise saved_plan.refusal(str(args.plan), found)
    skipped = len(plan.pending)
    if args.no_delete:
        plan = guard.without_deletes(plan)
    skipped -= len(plan.pending)
    sys.stdout.write(changes.text(plan, against=against, colour=colour.enabled(args)))
    if skipped:
        print(f"{skipped} deletion{'s' * (skipped != 1)} skipped (--no-delete).")
    guard.check(plan, desired, allow_mass_delete=args.allow_mass_delete, max_deletes=args.max_deletes)
    if not plan.pending:
        print("Nothing to do.")
        return None
    if not (args.yes or args.dry_run) and sys.stdin.isatty():
        _confirm(plan.env, len(plan.pending))
    total = len(apply.checked(plan)) if args.dry_run else len(plan.pending)
    unchecked = sum(c.kind.api.validates and apply.awaits_ids(c) for c in plan.pending) if args.dry_run else 0
    outcomes = apply.apply(plan, dd, dry_run=args.dry_run, workers=args.concurrency, done=_progress(total, args.env))
    return outcomes, unchecked


def _confirm(env: str, count: int) -> None:
    """On a terminal, a person reads the plan above and says yes; anything else writes nothing."""
    try:
        answer = input(f"Apply these {count} change{'s' * (count != 1)} to {env}? Only 'yes' applies: ")
    except EOFError:
        answer = ""
    if answer.strip() != "yes":
        raise ObsError.of("sync cancelled: nothing was written", "answer yes to apply, or pass --yes")


def _progress(total: int, env: str, every: float = 2.0) -> Callable[[Outcome], None]:
    """Progress on stderr for long runs: at most one line every `every` seconds, and the last one."""
    finished = failed = 0
    shown = time.monotonic()

    def done(outcome: Outcome) -> None:
        nonlocal finished, failed, shown
        finished += 1
        failed += not outcome.ok
        now = time.monotonic()
        if now - shown >= every or (finished == total and total >= 50):
            shown = now
            print(f"sync {env}: {finished}/{total} done, {failed} failed", file=sys.stderr)

    return done
