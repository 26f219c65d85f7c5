"""`obs backtest`: the environment's monitors replayed over real metric history, with the model of `obs test`."""

from __future__ import annotations

import argparse
import gc
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from sync.aws.backtest.cache import Cache
from sync.aws.backtest.fetch import fetch
from sync.aws.core import history as cloudwatch
from sync.aws.core.datadog_names import Read, read_for
from sync.cli import backtest_datadog as datadog
from sync.cli.conventions import Commands, Exit, format_option
from sync.core.backtest.compare import compare
from sync.core.backtest.fetched import Fetched
from sync.core.backtest.readings import History, Reading, readings
from sync.core.backtest.reads import reads
from sync.core.backtest.replay import Replay, Setup, replay
from sync.core.evaluation import notes
from sync.core.kinds import SLO
from sync.core.resources import Resource
from sync.definitions.load import load
from sync.definitions.model import Definitions, Environment
from sync.errors import ObsError, Problem
from sync.expand import backtest as placed
from sync.expand.desired import expand_env
from sync.preview import revision
from sync.report import backtest as report

CACHE = Path(".obs-cache") / "backtest"
WARMUP = timedelta(hours=6)  # history before the period, so the first windows (up to a 6 h burn rate) are full
SOURCES = {"cloudwatch": "CloudWatch", "datadog": "Datadog"}
Wanted = Read | datadog.Query  # one series to read, from the source asked


def register(commands: Commands) -> None:
    parser = commands.add_parser(
        "backtest",
        help="replay the environment's monitors over real metric history: what would have paged",
        description="Reads the series every monitor of the environment reads from CloudWatch (GetMetricData, "
        "credentials from the standard AWS chain), or with --source datadog from Datadog's timeseries query "
        "(DD_API_KEY and DD_APP_KEY, the timeseries_query permission), and evaluates every monitor, composite "
        "and burn-rate alert on them minute by minute with the model of `obs test`, planned maintenance on the "
        "real clock. Reports per monitor and per audience the alerts, pages and notifications, and the "
        f"incidents. Fetched days are kept in {CACHE}/ under the definitions folder. Exit 0 when it ran, 1 on error.",
    )
    parser.add_argument("--env", required=True, metavar="ENV", help="the environment to replay")
    parser.add_argument("--days", type=int, default=14, metavar="N", help="the period: the last N days (default 14)")
    parser.add_argument("--from", dest="start", metavar="T", help="the period's start, ISO 8601 UTC (with --to)")
    parser.add_argument("--to", dest="end", metavar="T", help="the period's end, ISO 8601 UTC (default: now)")
    parser.add_argument(
        "--source",
        choices=sorted(SOURCES),
        default="cloudwatch",
        help="where the history is read: CloudWatch (default; AWS integration metrics, 15 days at 1-minute "
        "resolution) or Datadog (any metric Datadog holds, 15 months; one request per UTC day and 16 series)",
    )
    parser.add_argument("--queue", action="append", default=[], metavar="Q", help="only this queue (repeatable)")
    parser.add_argument(
        "--base",
        metavar="REF",
        help="also replay the definitions of this git revision (as `obs diff` renders a base) on the same history, "
        "and say which incidents would no longer page and which pages are new",
    )
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


@dataclass(frozen=True)
class _Side:
    """One revision's environment: its definitions, its monitors, and the series they read."""

    defs: Definitions
    env: Environment
    resources: tuple[Resource, ...]
    wanted: Mapping[str, Wanted]  # "monitor key|n" -> the series
    unread: dict[str, str]  # key -> why none of its series can be read


def run(args: argparse.Namespace) -> int:
    root: Path = args.definitions
    source: str = args.source
    head = _side(load(root), args.env, args.queue, source)
    base = _base(root, args.base, args.env, args.queue, source) if args.base else None
    period = _period(args, datetime.now(UTC).replace(second=0, microsecond=0), source)
    sides = [head] if base is None else [head, base]
    cache = Cache(None if args.no_cache else (args.cache or root / CACHE))
    fetched: Fetched[Any]
    if source == "datadog":
        queries = sorted({q for side in sides for q in side.wanted.values() if isinstance(q, datadog.Query)})
        fetched = datadog.fetch(head.env, queries, period.origin, period.end, period.now, cache)
        history = datadog.history(fetched.points, period.origin)
    else:
        reads = sorted({read for side in sides for read in side.wanted.values() if isinstance(read, Read)}, key=repr)
        fetched = fetch(reads, period.origin, period.end, period.now, cache)
        history = _history(head.env, fetched, period)
    _check_any(head.env, fetched, period, source)
    print(
        f"read {fetched.datapoints} points in {fetched.calls} calls, {fetched.cached} series-days cached",
        file=sys.stderr,
    )
    used: set[notes.Assumption] = set()
    found = readings(history, head.env.metrics_source, used)
    replayed = _replay(head, args.queue, period, fetched, found, used)
    compared = None
    if base is not None:
        before = _replay(base, args.queue, period, fetched, found, set(used))
        compared = (args.base, compare(before, replayed))
    result = report.Backtest(
        head.env.name, period.start, period.end, period.origin, SOURCES[source], replayed, compared
    )
    sys.stdout.write({"json": report.as_json, "markdown": report.markdown}.get(args.format, report.text)(result))
    return Exit.OK


def _side(defs: Definitions, env_name: str, queues: Sequence[str], source: str, check: bool = True) -> _Side:
    """`check`: a queue asked for must exist (in a base revision it may not yet)."""
    env = defs.environment(env_name)
    known = {q.name for q in defs.env_queues[env.name]}
    for queue in queues if check else ():
        if queue not in known:
            raise ObsError.of(f"{env.name} has no queue '{queue}'", "use one of: " + ", ".join(sorted(known)))
    resources = expand_env(defs, env)
    found = datadog.wanted(resources, queues) if source == "datadog" else _wanted(env, resources, queues)
    return _Side(defs, env, resources, *found)


def _base(root: Path, ref: str, env_name: str, queues: Sequence[str], source: str) -> _Side:
    """The base revision's definitions, read from git as `obs diff` reads a base (the working tree untouched),
    rendered by this version of obs."""
    revision.repository_prefix(root)
    revision.resolve(root, ref)
    with revision.checked_out(root, ref) as folder:
        try:
            defs = load(folder)
            if env_name not in {e.name for e in defs.environments}:
                raise ObsError.of(f"the base revision '{ref}' has no environment {env_name}", "compare with another")
            return _side(defs, env_name, queues, source, check=False)
        except ObsError as exc:
            what = f"the base revision '{ref}' does not load with this version of obs"
            raise ObsError(Problem(what=what, fix="compare with another revision"), *exc.problems) from None


def _replay(
    side: _Side,
    queues: Sequence[str],
    period: Period,
    fetched: Fetched[Any],
    found: Sequence[Reading],
    used: set[notes.Assumption],
) -> Replay:
    unread = dict(side.unread)
    for key, read in side.wanted.items():
        if read in fetched.unread:
            unread.setdefault(key.split("|")[0], fetched.unread[read])
    setup = placed.setup(
        side.defs, side.env, side.resources, queues, period.origin, period.duration, period.warmup, unread
    )
    return replay_paused(setup, found, used)


def replay_paused(setup: Setup, found: Sequence[Reading], used: set[notes.Assumption]) -> Replay:
    """`replay` with the cyclic garbage collector paused: a replay allocates millions of steps that live until it
    ends, which the collector would traverse again and again (about a tenth of a 14-day replay's time). A replay
    makes no reference cycles of note: reference counting frees what it drops, as before."""
    was = gc.isenabled()
    gc.disable()
    try:
        return replay(setup, found, used)
    finally:
        if was:
            gc.enable()


def _period(args: argparse.Namespace, now: datetime, source: str) -> Period:
    end = _time(args.end, "--to") if args.end else now
    if args.start:
        start = _time(args.start, "--from")
    else:
        if args.days < 1:
            raise ObsError.of(f"--days {args.days} is no period", "give at least 1")
        start = end - timedelta(days=args.days)
    oldest = now - (datadog.RETENTION if source == "datadog" else cloudwatch.RETENTION)
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


def _history(env: Environment, fetched: Fetched[Read], period: Period) -> list[History]:
    out = []
    for read, points in sorted(fetched.points.items(), key=lambda item: repr(item[0])):
        minutes = {_minutes(stamp - period.origin): value for stamp, value in points.items()}
        tags = read.tags(env.account_tag)
        out.append(History(read.name, tags, minutes, sqs=read.source.namespace == "AWS/SQS"))
    return out


def _check_any(env: Environment, fetched: Fetched[Any], period: Period, source: str) -> None:
    """Not one point for any monitor: the wrong account, region or org, not a quiet fortnight."""
    if not fetched.points or any(fetched.points.values()):
        return
    if source == "datadog":
        raise ObsError.of(
            f"Datadog has no data for any monitor of {env.name} between {report.iso(period.origin)} and "
            f"{report.iso(period.end)}",
            f"check that DD_API_KEY and DD_APP_KEY are keys of the org of {env.name} ({env.site})",
        )
    regions = ", ".join(sorted({r.region for r in fetched.points}))
    raise ObsError.of(
        f"CloudWatch has no data for any monitor of {env.name} in {regions} between "
        f"{report.iso(period.origin)} and {report.iso(period.end)}",
        f"check that the AWS credentials are for account {env.account_id} and the region is right",
    )
