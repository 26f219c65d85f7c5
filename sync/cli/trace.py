"""The `obs trace` command line."""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from sync.aws.core.failures import Window
from sync.aws.core.target import TraceTarget, is_topic_arn, parse_duration, target_from_arn, window_bounds
from sync.aws.tracing.report import render_json, render_table
from sync.aws.tracing.resolve import resolve_queues, target_from_definitions
from sync.cli.conventions import SUMMARIES, Commands, Exit, format_option
from sync.errors import ObsError

# boto3 takes about half of obs's start-up: it is imported when a trace runs, not by every command.
if TYPE_CHECKING:
    from sync.aws.reads.clients import Connector
    from sync.aws.reads.logs import Progress


def register(commands: Commands) -> None:
    parser = commands.add_parser(
        "trace",
        help=SUMMARIES["trace"],
        description="Read the topic's SNS delivery-status Failure log and list each failed message with its "
        f"cause and fix. Exit {Exit.OK} when nothing failed, {Exit.FOUND} when failures were found, "
        f"{Exit.ERROR} on error.",
    )
    parser.add_argument("--env", help="environment from the definitions (optional when --topic is an ARN)")
    parser.add_argument("--topic", required=True, help="topic name (with --env) or topic ARN")
    parser.add_argument("--since", help="how far back from now, e.g. 30m, 2h, 1d (default 1h)")
    parser.add_argument("--start", help="window start, ISO-8601 UTC (e.g. 2026-11-30T10:00:00Z)")
    parser.add_argument("--end", help="window end, ISO-8601 UTC (default now)")
    parser.add_argument("--queue", action="append", default=[], help="only deliveries to this queue")
    # "table" is what the text format was first called; scripts may still pass it.
    format_option(parser, ("text", "json"), also={"table": "text"})
    parser.add_argument(
        "--peek-dlq",
        action="store_true",
        help="read the subscription DLQ without deleting anything, to show bodies and FIFO ids",
    )
    parser.add_argument("--dlq-limit", type=int, default=1000, help="most DLQ messages to peek at")
    parser.add_argument("--slack", default="5m", help="extra read time for log delivery lag")
    parser.add_argument(
        "--engine",
        choices=("auto", "filter", "insights"),
        default="auto",
        help="how to read the log: FilterLogEvents, Logs Insights, or auto (Insights beyond 6 h)",
    )
    parser.add_argument("--no-metrics", action="store_true", help="skip the NumberOfNotificationsFailed summary")
    parser.add_argument("--endpoint-url", help="AWS endpoint override (default: AWS_ENDPOINT_URL, else AWS)")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from sync.aws.reads.clients import connect  # noqa: PLC0415 (boto3 loads late: see above)

    return execute(args, connect)


def execute(
    args: argparse.Namespace,
    connector: Connector,
    now: datetime | None = None,
    out: TextIO | None = None,
    err: TextIO | None = None,
) -> int:
    """Trace as the arguments ask, print the report; 0 when nothing failed, 3 when something did."""
    from sync.aws.reads.clients import check_region  # noqa: PLC0415 (boto3 loads late: see above)
    from sync.aws.tracing.tracer import Options, trace  # noqa: PLC0415 (boto3 loads late: see above)

    out = out or sys.stdout
    err = err or sys.stderr
    target = _target(args)
    check_region(target.partition, target.region, f"topic {target.topic_arn}")
    now = now or datetime.now(UTC)
    start, end = window_bounds(args.since, args.start, args.end, now)
    window = Window(start, end, parse_duration(args.slack, "--slack", allow_zero=True))
    if args.dlq_limit < 1:
        raise ObsError.of(f"--dlq-limit {args.dlq_limit} is below 1", "give a positive number of messages")
    queues = resolve_queues(target, args.queue)
    options = Options(peek_dlq=args.peek_dlq, dlq_limit=args.dlq_limit, metrics=not args.no_metrics, engine=args.engine)
    clients = connector(target.region, args.endpoint_url)
    result = trace(clients, target, window, queues=queues, options=options, progress=progress_lines(err), now=now)
    out.write(render_json(result) + "\n" if args.format == "json" else render_table(result))
    # failures obs could not place are failures too: never an all-clear
    return Exit.FOUND if result.findings or result.tally.malformed_sqs else Exit.OK


def _target(args: argparse.Namespace) -> TraceTarget:
    topic: str = args.topic
    if args.env:
        root: Path = args.definitions
        return target_from_definitions(root, args.env, topic)
    if is_topic_arn(topic):
        return target_from_arn(topic)
    raise ObsError.of(
        f"--topic {topic!r} is a name, so obs needs --env to place it",
        "add --env ENV, or pass the topic ARN (arn:aws:sns:<region>:<account>:<name>)",
    )


def progress_lines(err: TextIO, clock: Callable[[], float] = time.monotonic, every: float = 1.0) -> Progress:
    """Progress lines on stderr, at most one a second so long reads stay readable."""
    last = [clock()]

    def report(text: str) -> None:
        moment = clock()
        if moment - last[0] < every:
            return
        last[0] = moment
        err.write(f"reading {text}\n")
        err.flush()

    return report
