"""The engine of `obs backtest` and `obs diff --backtest`: one revision's monitors of one environment (a side),
the series they read fetched once for both sides from CloudWatch or Datadog, and each side replayed on them
with the model of `obs test`."""

from __future__ import annotations

import gc
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sync.aws.backtest.cache import Cache
from sync.aws.backtest.fetch import fetch
from sync.aws.core import history as cloudwatch
from sync.aws.core.datadog_names import Read, read_for
from sync.cli import backtest_datadog as datadog
from sync.core.backtest.compare import compare
from sync.core.backtest.fetched import SOURCES, Fetched
from sync.core.backtest.readings import History, Reading, readings
from sync.core.backtest.reads import reads
from sync.core.backtest.replay import Replay, Setup, replay
from sync.core.evaluation import notes
from sync.core.kinds import SLO
from sync.core.resources import Resource
from sync.definitions.model import Definitions, Environment
from sync.errors import ObsError
from sync.expand import backtest as placed
from sync.expand.desired import expand_env
from sync.report import backtest as report

WARMUP = timedelta(hours=6)  # history before the period, so the first windows (up to a 6 h burn rate) are full
Wanted = Read | datadog.Query  # one series to read, from the source asked


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


def period(start: datetime, end: datetime, now: datetime, source: str) -> Period:
    """The period asked for, and the warm-up before it that the source still keeps."""
    oldest = now - (datadog.RETENTION if source == "datadog" else cloudwatch.RETENTION)
    return Period(start, end, max(start - WARMUP, min(start, oldest)), now)


@dataclass(frozen=True)
class Side:
    """One revision's environment: its definitions, its monitors, and the series they read."""

    defs: Definitions
    env: Environment
    resources: tuple[Resource, ...]
    wanted: Mapping[str, Wanted]  # "monitor key|n" -> the series
    unread: dict[str, str]  # key -> why none of its series can be read


def side(
    defs: Definitions,
    env_name: str,
    queues: Sequence[str],
    source: str,
    *,
    check: bool = True,
    resources: Sequence[Resource] | None = None,
) -> Side:
    """`check`: a queue asked for must exist (in a base revision it may not yet). `resources`: the side's
    monitors as rendered elsewhere (a base revision by its own code), else as this obs expands `defs`."""
    env = defs.environment(env_name)
    known = {q.name for q in defs.env_queues[env.name]}
    for queue in queues if check else ():
        if queue not in known:
            raise ObsError.of(f"{env.name} has no queue '{queue}'", "use one of: " + ", ".join(sorted(known)))
    rendered = tuple(resources) if resources is not None else expand_env(defs, env)
    found = datadog.wanted(rendered, queues) if source == "datadog" else _wanted(env, rendered, queues)
    return Side(defs, env, rendered, *found)


def replayed(
    head: Side,
    base: tuple[str, Side] | None,
    queues: Sequence[str],
    span: Period,
    source: str,
    cache: Cache,
) -> report.Backtest:
    """Both sides replayed on one fetch of the series either reads; the base's pages compared with the head's."""
    fetched, history = read_history([head] if base is None else [head, base[1]], span, source, cache)
    used: set[notes.Assumption] = set()
    found = readings(history, head.env.metrics_source, used)
    after = replay_side(head, queues, span, fetched, found, used)
    compared = None
    if base is not None:
        before = replay_side(base[1], queues, span, fetched, found, set(used))
        compared = (base[0], compare(before, after))
    return report.Backtest(head.env.name, span.start, span.end, span.origin, SOURCES[source], after, compared)


def read_history(sides: Sequence[Side], span: Period, source: str, cache: Cache) -> tuple[Fetched[Any], list[History]]:
    """Every series the sides' monitors read over the period (and its warm-up), from the source asked."""
    head = sides[0]
    fetched: Fetched[Any]
    if source == "datadog":
        queries = sorted({q for s in sides for q in s.wanted.values() if isinstance(q, datadog.Query)})
        fetched = datadog.fetch(head.env, queries, span.origin, span.end, span.now, cache)
        history = datadog.history(fetched.points, span.origin)
    else:
        wanted = sorted({r for s in sides for r in s.wanted.values() if isinstance(r, Read)}, key=repr)
        fetched = fetch(wanted, span.origin, span.end, span.now, cache)
        history = _history(head.env, fetched, span)
    _check_any(head.env, fetched, span, source)
    print(
        f"read {fetched.datapoints} points in {fetched.calls} calls, {fetched.cached} series-days cached",
        file=sys.stderr,
    )
    return fetched, history


def replay_side(
    side: Side,
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
