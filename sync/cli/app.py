"""The `obs` command line: the imperative shell and the single error boundary."""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Callable, Sequence
from contextlib import closing
from pathlib import Path
from typing import NoReturn

from sync.check import accepted
from sync.cli import audit as audit_cli
from sync.cli import diff
from sync.cli import trace as trace_cli
from sync.core import guard, placeholders
from sync.core.plan import DELETE, Plan, make_plan
from sync.core.resources import Resource
from sync.datadog import apply, reads
from sync.datadog.apply import Outcome
from sync.datadog.client import Datadog, RequestFailed, endpoint
from sync.definitions import schema
from sync.definitions.load import load
from sync.definitions.model import Definitions
from sync.errors import ObsError
from sync.expand import oncall
from sync.expand.desired import expand
from sync.report import changes, links

EXIT_OK, EXIT_ERROR, EXIT_CHANGES = 0, 1, 2
DEFINITIONS_ENV = "OBS_DEFINITIONS"


def main(argv: Sequence[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    try:
        return int(args.handler(args))
    except ObsError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_ERROR
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except Exception as exc:
        if args.debug:
            raise
        print(f"internal error: {type(exc).__name__}: {exc} (run with --debug for details)", file=sys.stderr)
        return EXIT_ERROR


class _Parser(argparse.ArgumentParser):
    """Usage errors exit 1 like every other error: 2 means "changes pending" to CI."""

    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        self.exit(EXIT_ERROR, f"error: {message}\n")


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="obs",
        description="Datadog monitors and dashboards for SNS -> SQS -> ECS job queues, as code.",
        epilog="Exit codes: 0 ok or no changes, 1 error, 2 changes pending (with --detailed-exitcode).",
    )
    parser.add_argument(
        "--definitions",
        type=Path,
        default=Path(os.environ.get(DEFINITIONS_ENV) or "."),
        metavar="DIR",
        help=f"the definitions folder (default: ${DEFINITIONS_ENV}, else the current directory)",
    )
    parser.add_argument("--debug", action="store_true", help="show tracebacks of internal errors")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    validate = commands.add_parser("validate", help="check every definition in every environment, offline")
    validate.set_defaults(handler=_validate)

    render = commands.add_parser("render", help="write each resource's exact API request body as JSON")
    render.add_argument("--env", help="the environment to render (default: every one, each to DIR/<env>)")
    render.add_argument("--out", required=True, type=Path, metavar="DIR", help="writes DIR/monitors and DIR/dashboards")
    render.set_defaults(handler=_render)

    plan = commands.add_parser("plan", help="show what a sync would change in the live org")
    plan.add_argument("--env", required=True, help="the environment to plan")
    plan.add_argument("--offline", action="store_true", help="plan against an empty org, without credentials")
    plan.add_argument("--format", choices=changes.FORMATS, default="text")
    plan.add_argument("--detailed-exitcode", action="store_true", help="exit 2 when changes are pending (0 when none)")
    _live_options(plan)
    plan.set_defaults(handler=_plan)

    sync = commands.add_parser("sync", help="make the live org match the definitions: print the plan, then apply it")
    sync.add_argument("--env", required=True, help="the environment to sync")
    sync.add_argument("--dry-run", action="store_true", help="check every changed monitor with the API; write nothing")
    sync.add_argument("--no-delete", action="store_true", help="leave orphans and duplicates in place")
    sync.add_argument(
        "--allow-mass-delete",
        action="store_true",
        help=f"delete more than the limit of {guard.MIN_DELETE_LIMIT}-{guard.MAX_DELETE_LIMIT} objects "
        f"({guard.DELETE_SHARE:.0%} of the managed ones)",
    )
    sync.add_argument(
        "--max-deletes", type=_count_between(0, 1_000_000), metavar="N", help="the most orphans one sync may delete"
    )
    sync.add_argument(
        "--concurrency", type=_count_between(1, 32), default=8, metavar="N", help="writes in flight (default 8)"
    )
    _live_options(sync)
    sync.set_defaults(handler=_sync)

    links_ = commands.add_parser(
        "links", help="print where to look for each queue: dashboard, monitors, runbook, AWS consoles"
    )
    links_.add_argument("--env", required=True, help="the environment")
    links_.add_argument("--queue", metavar="NAME", help="only this queue (its logical name)")
    links_.add_argument("--format", choices=links.FORMATS, default="text")
    links_.add_argument("--offline", action="store_true", help="without credentials: dashboard IDs as placeholders")
    links_.add_argument(
        "--timeout", type=_positive_seconds, default=30.0, metavar="SECONDS", help="per request (default 30)"
    )
    links_.add_argument("--verbose", action="store_true", help="report API calls on stderr")
    links_.set_defaults(handler=_links, adopt=False)

    schemas = commands.add_parser("schemas", help="write the JSON Schemas of the definition files, for editors")
    schemas.add_argument("--out", required=True, type=Path, metavar="DIR")
    schemas.set_defaults(handler=_schemas)

    trace_cli.register(commands)
    audit_cli.register(commands)
    diff.register(commands)
    return parser


def _load(args: argparse.Namespace) -> Definitions:
    return load(args.definitions)


def _validate(args: argparse.Namespace) -> int:
    defs = _load(args)
    rendered = accepted.expand_checked(defs)
    counts = ", ".join(f"{env}: {_count(resources)}" for env, resources in rendered.items())
    print(
        f"ok: {len(defs.queues)} queues, {len(defs.metrics)} metrics, {len(defs.environments)} environments ({counts})"
    )
    return EXIT_OK


def _render(args: argparse.Namespace) -> int:
    defs = _load(args)
    envs = [args.env] if args.env else [env.name for env in defs.environments]
    rendered = {env: expand(defs, env) for env in envs}
    accepted.check(defs, [r for resources in rendered.values() for r in resources])  # all or nothing is written
    for env, resources in rendered.items():
        out = args.out if args.env else args.out / env
        _write_bodies(out, resources)
        print(f"wrote {_count(resources)} to {out}")
    if placeholders.awaited(r.body for resources in rendered.values() for r in resources):
        print(f"note: {placeholders.PLACEHOLDER_NOTE}")
    return EXIT_OK


def _write_bodies(out: Path, resources: Sequence[Resource]) -> None:
    files = {out / f"{r.kind}s" / f"{r.key.replace('/', '.')}.json": r for r in resources}
    for folder in {path.parent for path in files} | {out / "monitors", out / "dashboards"}:
        folder.mkdir(parents=True, exist_ok=True)
        for stale in folder.glob("*.json"):  # a removed resource must not linger in the output
            if stale not in files:
                stale.unlink()
    for path, resource in files.items():  # resources come sorted by kind and key
        path.write_text(json.dumps(resource.body, indent=2, sort_keys=True, ensure_ascii=False) + "\n")


def _schemas(args: argparse.Namespace) -> int:
    args.out.mkdir(parents=True, exist_ok=True)
    for name, text in schema.files().items():
        (args.out / name).write_text(text)
    print(f"wrote {len(schema.files())} schemas to {args.out}; point editors at them with a first line like")
    print(f"# yaml-language-server: $schema={args.out}/metric.schema.json")
    return EXIT_OK


def _live_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--adopt",
        action="store_true",
        help="take over unmanaged monitors and dashboards named like a desired one, keeping their IDs "
        "(reads every monitor of the org)",
    )
    parser.add_argument(
        "--timeout", type=_positive_seconds, default=30.0, metavar="SECONDS", help="per request (default 30)"
    )
    parser.add_argument("--verbose", action="store_true", help="report API calls, retries and waits on stderr")


def _count_between(low: int, high: int) -> Callable[[str], int]:
    def parse(text: str) -> int:
        value = int(text)
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(f"must be from {low} to {high}")
        return value

    return parse


def _positive_seconds(text: str) -> float:
    value = float(text)
    if not value > 0:  # the client reads 0 as "no timeout at all", and a negative one fails deep inside urllib3
        raise argparse.ArgumentTypeError("must be more than 0")
    return value


def _desired(args: argparse.Namespace) -> tuple[Definitions, Sequence[Resource]]:
    defs = _load(args)
    desired = expand(defs, args.env)
    accepted.check(defs, desired)
    return defs, desired


def _plan(args: argparse.Namespace) -> int:
    defs, desired = _desired(args)
    if args.offline:
        plan, against = make_plan(args.env, desired, live=()), "an empty org (offline)"
    else:
        with _connect(args, defs) as dd:
            try:
                plan, against = _live_plan(args, dd, desired)
            finally:
                _verbose(args, dd)
    sys.stdout.write(changes.render(plan, args.format, against=against, colour=_colour()))
    return EXIT_CHANGES if args.detailed_exitcode and plan.pending else EXIT_OK


def _sync(args: argparse.Namespace) -> int:
    defs, desired = _desired(args)
    started = time.monotonic()
    with _connect(args, defs) as dd:
        try:
            outcomes = _apply(args, dd, desired)
        finally:
            _verbose(args, dd)
    if outcomes is None:
        return EXIT_OK
    sys.stdout.write(changes.outcomes(outcomes, dry_run=args.dry_run, seconds=time.monotonic() - started))
    return EXIT_ERROR if any(not o.ok for o in outcomes) else EXIT_OK


def _apply(args: argparse.Namespace, dd: Datadog, desired: Sequence[Resource]) -> list[Outcome] | None:
    """Print the plan, check the guards, then apply (or validate) it; None when there is nothing to do."""
    plan, against = _live_plan(args, dd, desired)
    skipped = len(plan.pending)
    if args.no_delete:
        plan = guard.without_deletes(plan)
    skipped -= len(plan.pending)
    sys.stdout.write(changes.text(plan, against=against, colour=_colour()))
    if skipped:
        print(f"{skipped} deletion{'s' * (skipped != 1)} skipped (--no-delete).")
    guard.check(plan, desired, allow_mass_delete=args.allow_mass_delete, max_deletes=args.max_deletes)
    if not plan.pending:
        print("Nothing to do.")
        return None
    total = len(apply.checked(plan)) if args.dry_run else len(plan.pending)
    progress = _progress(total, args.env)
    return apply.apply(plan, dd, dry_run=args.dry_run, workers=args.concurrency, done=progress)


def _links(args: argparse.Namespace) -> int:
    defs, desired = _desired(args)
    placed = oncall.chosen(defs, args.env, args.queue)  # an unknown queue is an error before any call
    ids: dict[tuple[str, str], str] = {}
    source = "nowhere (offline): dashboard links hold placeholders, monitors have no page yet"
    if not args.offline:
        with _connect(args, defs) as dd:
            try:
                plan, source = _live_plan(args, dd, desired)
            finally:
                _verbose(args, dd)
        # The objects a sync keeps; duplicates and orphans it would delete are not worth a link.
        ids = {(c.kind, c.key): c.id for c in plan.changes if c.id and c.action != DELETE}
    sheet = oncall.sheet(defs, args.env, desired, ids, placed)
    sys.stdout.write(links.render(sheet, args.format, source=source, offline=args.offline))
    return EXIT_OK


def _connect(args: argparse.Namespace, defs: Definitions) -> closing[Datadog]:
    env = defs.environment(args.env)
    workers = getattr(args, "concurrency", 1)
    return closing(Datadog(endpoint(os.environ, env.site, env.name), workers=workers, timeout=args.timeout))


def _live_plan(args: argparse.Namespace, dd: Datadog, desired: Sequence[Resource]) -> tuple[Plan, str]:
    try:
        plan = reads.plan(dd, args.env, desired, adopt=args.adopt)
    except RequestFailed as exc:
        fix = (
            "check that DD_API_KEY and DD_APP_KEY belong to this org and that the application key may read "
            "monitors and dashboards"
            if exc.status in (401, 403)
            else "try again; --verbose shows the calls made"
        )
        raise ObsError.of(f"could not read the live org: {exc}", fix) from None
    return plan, f"the live org ({dd.host})"


def _verbose(args: argparse.Namespace, dd: Datadog) -> None:
    if args.verbose:
        calls = ", ".join(f"{label} {n}" for label, n in sorted(dd.calls.items()))
        print(
            f"API calls: {sum(dd.calls.values())} ({calls}); {dd.retried} retried, {dd.throttled} throttled (429), "
            f"{dd.waited:.1f} s waited for rate limits",
            file=sys.stderr,
        )


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


def _colour() -> bool:
    return sys.stdout.isatty() and "NO_COLOR" not in os.environ


def _count(resources: Sequence[Resource]) -> str:
    monitors = sum(r.kind == "monitor" for r in resources)
    dashboards = len(resources) - monitors
    return f"{monitors} monitor{'s' * (monitors != 1)}, {dashboards} dashboard{'s' * (dashboards != 1)}"


if __name__ == "__main__":
    sys.exit(main())
