"""The `obs audit` command line: judge an environment's live AWS wiring against the definitions."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, TextIO

from sync.definitions.load import load
from sync.errors import ObsError
from sync.trace.audit import audit
from sync.trace.audit_report import FORMATS, render
from sync.trace.aws import Clients, check_region, connect
from sync.trace.declared import queue_specs
from sync.trace.findings import SEVERITIES, WARNING, at_least

FOUND = 3  # findings at or above --severity: the exit code obs trace uses for failures found

Connector = Callable[[str, str | None], Clients]


def register(commands: argparse._SubParsersAction[Any]) -> None:
    parser = commands.add_parser(
        "audit",
        help="check the live SNS -> SQS wiring of an environment against the definitions (read-only)",
        description="Read every queue, DLQ, topic, subscription and logging role the environment declares, with "
        "read-only AWS calls, and report what differs from the definitions or will lose messages, with the fix. "
        "Exit 0 when nothing is found at or above --severity, 3 when something is, 1 on error.",
    )
    parser.add_argument("--env", required=True, help="the environment to audit")
    parser.add_argument("--queue", action="append", default=[], metavar="NAME", help="only this queue (logical name)")
    parser.add_argument("--format", choices=FORMATS, default="text", help="output format")
    parser.add_argument(
        "--severity", choices=SEVERITIES, default=WARNING, help="report and fail on findings at least this serious"
    )
    parser.add_argument("--endpoint-url", help="AWS endpoint override (default: AWS_ENDPOINT_URL, else AWS)")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    return execute(args, connect)


def execute(args: argparse.Namespace, connector: Connector, out: TextIO | None = None) -> int:
    out = out or sys.stdout
    root: Path = getattr(args, "definitions", None) or Path.cwd()
    defs = load(root)
    env = defs.environment(args.env)
    specs = queue_specs(defs, env.name)
    if args.queue:
        known = {s.queue for s in specs}
        unknown = sorted(set(args.queue) - known)
        if unknown:
            raise ObsError.of(
                f"no queue {unknown[0]!r} in environment {env.name!r}", f"use one of: {', '.join(sorted(known))}"
            )
        specs = tuple(s for s in specs if s.queue in set(args.queue))
    check_region("aws", env.region, f"environment {env.name}")
    clients = connector(env.region, args.endpoint_url)
    result = audit(clients, env.name, env.account_id, env.region, specs)
    out.write(render(result, args.format, args.severity))
    return FOUND if at_least(result.findings, args.severity) else 0
