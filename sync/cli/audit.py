"""The `obs audit` command line: judge an environment's live AWS wiring against the definitions."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from sync.aws.auditing.report import render
from sync.aws.core.audit import AuditResult, monitored
from sync.aws.core.declared import queue_specs
from sync.aws.core.findings import SEVERITIES, WARNING, at_least
from sync.cli.conventions import SUMMARIES, Commands, Exit, format_option
from sync.definitions.load import load
from sync.definitions.model import Definitions, Environment
from sync.errors import ObsError
from sync.expand import placement

# boto3 takes about half of obs's start-up: it is imported when an audit runs, not by every command.
if TYPE_CHECKING:
    from sync.aws.reads.clients import Connector


def register(commands: Commands) -> None:
    parser = commands.add_parser(
        "audit",
        help=SUMMARIES["audit"],
        description="Read every queue, DLQ, topic, subscription and logging role the environment declares, with "
        "read-only AWS calls, and report what differs from the definitions or will lose messages, with the fix. "
        f"Exit {Exit.OK} when nothing is found at or above --severity, {Exit.FOUND} (as obs trace's failures "
        f"found) when something is, {Exit.ERROR} on error.",
    )
    parser.add_argument("--env", required=True, help="the environment to audit")
    parser.add_argument("--queue", action="append", default=[], metavar="NAME", help="only this queue (logical name)")
    format_option(parser)
    parser.add_argument(
        "--severity",
        choices=SEVERITIES,
        default=WARNING,
        help="report and fail on findings at least this serious (default: warning)",
    )
    parser.add_argument("--endpoint-url", help="AWS endpoint override (default: AWS_ENDPOINT_URL, else AWS)")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    return execute(args, None)


def execute(args: argparse.Namespace, connector: Connector | None, out: TextIO | None = None) -> int:
    out = out or sys.stdout
    root: Path = getattr(args, "definitions", None) or Path.cwd()
    defs = load(root)
    result = audit_environment(defs, defs.environment(args.env), args.queue, connector, args.endpoint_url)
    out.write(render(result, args.format, args.severity))
    return Exit.FOUND if at_least(result.findings, args.severity) else Exit.OK


def audit_environment(
    defs: Definitions,
    env: Environment,
    queues: Sequence[str] = (),
    connector: Connector | None = None,
    endpoint_url: str | None = None,
) -> AuditResult:
    """Audit the environment's queues (or only `queues`, by logical name) with the standard credentials
    (`connector`, else boto3's own)."""
    from sync.aws.auditing.audit import audit  # noqa: PLC0415 (boto3 loads late: see above)
    from sync.aws.reads.clients import check_region, connect  # noqa: PLC0415 (boto3 loads late: see above)

    specs = queue_specs(defs, env)
    if queues:
        known = {s.queue for s in specs}
        unknown = sorted(set(queues) - known)
        if unknown:
            raise ObsError.of(
                f"no queue {unknown[0]!r} in environment {env.name!r}", f"use one of: {', '.join(sorted(known))}"
            )
        specs = tuple(s for s in specs if s.queue in set(queues))
    check_region(placement.partition(env.region), env.region, f"environment {env.name}")
    return audit((connector or connect)(env.region, endpoint_url), env.name, env.account_id, env.region, specs)


def monitored_report(defs: Definitions, env: Environment, connector: Connector | None = None) -> str:
    """For obs plan --live: the live settings the monitors are built on (retention, DLQs), before the plan."""
    result = audit_environment(defs, env, connector=connector)
    found = at_least(monitored(result.findings), WARNING)
    if not found:
        return (
            f"obs audit {env.name}: the live retention and DLQ settings the monitors depend on match the definitions\n"
        )
    lines = [
        f"obs audit {env.name}: {len(found)} live settings the monitors depend on differ (obs audit --env {env.name}):"
    ]
    lines += [
        f"  {f.severity.upper()} {f.check}: {f.queue}: {f.resource}: {f.live} (declared {f.declared}); fix: {f.fix}"
        for f in found
    ]
    return "\n".join(lines) + "\n"
