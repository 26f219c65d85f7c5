"""`obs backtest`: the environment's monitors replayed over real metric history, with the model of `obs test`."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

from sync.aws.backtest.cache import Cache
from sync.aws.backtest.fetch import Fetched, fetch
from sync.aws.core.datadog_names import Read, read_for
from sync.cli.conventions import Commands, Exit, format_option
from sync.core.backtest.readings import History, readings
from sync.core.backtest.reads import reads
from sync.core.backtest.replay import replay
from sync.core.evaluation import notes
from sync.core.kinds import SLO
from sync.core.resources import Resource
from sync.definitions.load import load
from sync.definitions.model import Environment
from sync.errors import ObsError
from sync.expand import backtest as placed
from sync.expand.desired import expand_env
from sync.report import backtest as report

CACHE = Path(".obs-cache") / "backtest"
WARMUP = timedelta(hours=6)  # history before the period, so the first windows (up to a 6 h burn rate) are full
SOURCE = "CloudWatch"


def register(commands: Commands) -> None:
    parser = commands.add_parser(
        "backtest",
        help="replay the environment's monitors over real metric history: what would have paged",
        description="Reads the series every monitor of the environment reads from CloudWatch (GetMetricData, "
        "credentials from the standard AWS chain) and evaluates every monitor, composite and burn-rate alert on "
        "them minute by minute with the model of `obs test`, planned maintenance on the real clock. Reports per "
        "monitor and per audience the alerts, pages and notifications, and the incidents. Fetched days are kept "
        f"in {CACHE}/ under the definitions folder. Exit 0 when it ran, 1 on error.",
    )
    parser.add_argument("--env", required=True, metavar="ENV", help="the environment to replay")
    parser.add_argument("--days", type=int, default=14, metavar="N", help="the period: the last N days (default 14)")
    parser.add_argument("--from", dest="start", metavar="T", help="the period's start, ISO 8601 UTC (with --to)")
    parser.add_argument("--to", dest="end", metavar="T", help="the period's end, ISO 8601 UTC (default: now)")
    parser.add_argument("--queue", action="append", default=[], metavar="Q", help="only this queue (repeatable)")
    parser.add_argument("--no-cache", action="store_true", help="read everything from the source, keep nothing")
    parser.add_argument("--cache", type=Path, metavar="DIR", help=f"the cache folder (default: {CACHE}/)")
    format_option(parser)
    parser.set_defaults(handler=run)


@dataclass(frozen=True)
class Period:
    start: datetime
    end: datetime
    origin: datetime  # the first minute fetched: the period's start less the warm-up
    now: datetime

    @property
    def warmup(self) -> int:
        return _minutes(self.start - self.origin)

    @property
    def duration(self) -> int:
        return _minutes(self.end - self.origin)


def _minutes(span: timedelta) -> int:
    return int(span.total_seconds() // 60)


def run(args: argparse.Namespace) -> int:
    defs = load(args.definitions)
    env = defs.environment(args.env)
    known = {q.name for q in defs.env_queues[env.name]}
    for queue in args.queue:
        if queue not in known:
            raise ObsError.of(f"{env.name} has no queue '{queue}'", "use one of: " + ", ".join(sorted(known)))
    period = _period(args, datetime.now(UTC).replace(second=0, microsecond=0))
    resources = expand_env(defs, env)
    wanted, unread = _wanted(env, resources, args.queue)
    cache = Cache(None if args.no_cache else (args.cache or args.definitions / CACHE))
    fetched = fetch(sorted(set(wanted.values()), key=repr), period.origin, period.end, period.now, cache)
    _check_any(env, fetched, period)
    for key, read in wanted.items():
        if read in fetched.unread:
            unread.setdefault(key.split("|")[0], fetched.unread[read])
    setup = placed.setup(defs, env, resources, args.queue, period.origin, period.duration, period.warmup, unread)
    used: set[notes.Assumption] = set()
    replayed = replay(setup, readings(_history(env, fetched, period), env.metrics_source, used), used)
    found = report.Backtest(env.name, period.start, period.end, period.origin, SOURCE, replayed)
    print(
        f"read {fetched.datapoints} points in {fetched.calls} calls, {fetched.cached} series-days cached",
        file=sys.stderr,
    )
    out = {"json": report.as_json, "markdown": report.markdown}.get(args.format, report.text)(found)
    sys.stdout.write(out)
    return Exit.OK


def _period(args: argparse.Namespace, now: datetime) -> Period:
    end = _time(args.end, "--to") if args.end else now
    if args.start:
        start = _time(args.start, "--from")
    else:
        if args.days < 1:
            raise ObsError.of(f"--days {args.days} is no period", "give at least 1")
        start = end - timedelta(days=args.days)
    oldest = now - timedelta(days=15)
    origin = max(start - WARMUP, min(start, oldest))
    return Period(start, end, origin, now)


def _time(text: str, option: str) -> datetime:
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise ObsError.of(
            f"{option} {text!r} is not an ISO 8601 time", f"write it as {option} 2025-01-31T08:00Z"
        ) from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC).replace(second=0, microsecond=0)


def _wanted(
    env: Environment, resources: Sequence[Resource], queues: Sequence[str]
) -> tuple[dict[str, Read], dict[str, str]]:
    """Each CloudWatch series to read, under "monitor key|n"; and the monitors none can be read for, with why."""
    slos = {r.key: r.body for r in resources if r.kind == SLO}
    wanted: dict[str, Read] = {}
    unread: dict[str, str] = {}
    for resource in placed.chosen(resources, queues):
        for n, (metric, tags) in enumerate(reads(resource.body, slos).filters):
            read = read_for(metric, tags, env.region, env.account_id, env.account_tag)
            if isinstance(read, str):
                unread.setdefault(resource.key, read)
            else:
                wanted[f"{resource.key}|{n}"] = read
    return wanted, unread


def _history(env: Environment, fetched: Fetched, period: Period) -> list[History]:
    out = []
    for read, points in sorted(fetched.points.items(), key=lambda item: repr(item[0])):
        minutes = {_minutes(stamp - period.origin): value for stamp, value in points.items()}
        tags = read.tags(env.account_tag)
        out.append(History(read.name, tags, minutes, sqs=read.source.namespace == "AWS/SQS"))
    return out


def _check_any(env: Environment, fetched: Fetched, period: Period) -> None:
    """Not one point for any monitor: the wrong account or region, not a quiet fortnight."""
    if fetched.points and not any(fetched.points.values()):
        regions = ", ".join(sorted({r.region for r in fetched.points}))
        raise ObsError.of(
            f"CloudWatch has no data for any monitor of {env.name} in {regions} between "
            f"{report.iso(period.origin)} and {report.iso(period.end)}",
            f"check that the AWS credentials are for account {env.account_id} and the region is right",
        )
