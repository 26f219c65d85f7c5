"""The `obs` command line: the imperative shell and the single error boundary."""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import NoReturn

from . import accepted, report, schema
from .definitions import load
from .errors import ObsError
from .expand import expand, expand_all
from .model import Definitions
from .plan import make_plan
from .resources import Resource
from .trace import cli as trace_cli

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
    render.add_argument("--env", required=True, help="the environment to render")
    render.add_argument("--out", required=True, type=Path, metavar="DIR", help="writes DIR/monitors and DIR/dashboards")
    render.set_defaults(handler=_render)

    plan = commands.add_parser("plan", help="show what a sync would change")
    plan.add_argument("--env", required=True, help="the environment to plan")
    plan.add_argument("--offline", action="store_true", help="plan against an empty org, without credentials")
    plan.add_argument("--format", choices=report.FORMATS, default="text")
    plan.add_argument("--detailed-exitcode", action="store_true", help="exit 2 when changes are pending (0 when none)")
    plan.set_defaults(handler=_plan)

    schemas = commands.add_parser("schemas", help="write the JSON Schemas of the definition files, for editors")
    schemas.add_argument("--out", required=True, type=Path, metavar="DIR")
    schemas.set_defaults(handler=_schemas)

    trace_cli.register(commands)
    return parser


def _load(args: argparse.Namespace) -> Definitions:
    return load(args.definitions)


def _validate(args: argparse.Namespace) -> int:
    defs = _load(args)
    rendered = expand_all(defs)
    accepted.check(defs, [r for resources in rendered.values() for r in resources])
    counts = ", ".join(f"{env}: {_count(resources)}" for env, resources in rendered.items())
    print(
        f"ok: {len(defs.queues)} queues, {len(defs.metrics)} metrics, {len(defs.environments)} environments ({counts})"
    )
    return EXIT_OK


def _render(args: argparse.Namespace) -> int:
    defs = _load(args)
    resources = expand(defs, args.env)
    accepted.check(defs, resources)
    files = {args.out / f"{r.kind}s" / f"{r.key.replace('/', '.')}.json": r for r in resources}
    for folder in {path.parent for path in files} | {args.out / "monitors", args.out / "dashboards"}:
        folder.mkdir(parents=True, exist_ok=True)
        for stale in folder.glob("*.json"):  # a removed resource must not linger in the output
            if stale not in files:
                stale.unlink()
    for path, resource in sorted(files.items()):
        path.write_text(json.dumps(resource.body, indent=2, sort_keys=True, ensure_ascii=False) + "\n")
    print(f"wrote {_count(resources)} to {args.out}")
    return EXIT_OK


def _schemas(args: argparse.Namespace) -> int:
    args.out.mkdir(parents=True, exist_ok=True)
    for name, text in schema.files().items():
        (args.out / name).write_text(text)
    print(f"wrote {len(schema.files())} schemas to {args.out}; point editors at them with a first line like")
    print(f"# yaml-language-server: $schema={args.out}/metric.schema.json")
    return EXIT_OK


def _plan(args: argparse.Namespace) -> int:
    if not args.offline:
        raise ObsError.of(
            "the live plan is not available in this version", "add --offline to plan against an empty org"
        )
    defs = _load(args)
    desired = expand(defs, args.env)
    accepted.check(defs, desired)
    plan = make_plan(args.env, desired, live=())
    colour = sys.stdout.isatty() and "NO_COLOR" not in os.environ
    sys.stdout.write(report.render(plan, args.format, against="an empty org (offline)", colour=colour))
    return EXIT_CHANGES if args.detailed_exitcode and plan.pending else EXIT_OK


def _count(resources: Sequence[Resource]) -> str:
    monitors = sum(r.kind == "monitor" for r in resources)
    dashboards = len(resources) - monitors
    return f"{monitors} monitor{'s' * (monitors != 1)}, {dashboards} dashboard{'s' * (dashboards != 1)}"


if __name__ == "__main__":
    sys.exit(main())
