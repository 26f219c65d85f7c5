"""`obs backtest --source datadog`: the series the monitors read, asked of Datadog as each monitor's metric
queries are written, with the credentials and pacing of every other Datadog call."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta

from sync.cli.live import connected
from sync.core.backtest.fetched import Store
from sync.core.backtest.readings import History
from sync.core.backtest.reads import reads
from sync.core.backtest.timeseries import RETENTION, Query, query_for
from sync.core.kinds import SLO
from sync.core.resources import Resource
from sync.datadog import timeseries
from sync.definitions.model import Environment
from sync.expand import backtest as placed

__all__ = ["RETENTION", "Query", "fetch", "history", "wanted"]


def wanted(resources: Sequence[Resource], queues: Sequence[str]) -> tuple[dict[str, Query], dict[str, str]]:
    """Each series to read, under "monitor key|n": every metric query a monitor reads can be asked of Datadog."""
    slos = {r.key: r.body for r in resources if r.kind == SLO}
    out: dict[str, Query] = {}
    for resource in placed.chosen(resources, queues):
        for n, leaf in enumerate(reads(resource.body, slos).leaves):
            out[f"{resource.key}|{n}"] = query_for(leaf)
    return out, {}


def fetch(
    env: Environment, queries: Sequence[Query], start: datetime, end: datetime, now: datetime, cache: Store
) -> timeseries.Fetched:
    without = "read the history from CloudWatch (--source cloudwatch)"
    with connected(env, timeout=30.0, verbose=False, without=without) as dd:
        return timeseries.fetch(dd, queries, start, end, now, cache)


def history(fetched: Mapping[Query, Mapping[datetime, float]], origin: datetime) -> list[History]:
    """Each query's series under its metric and tag filter: the leaves that read it select it, and only them
    (sync.core.backtest.timeseries.overlapping keeps out the queries that would select another's)."""
    out = []
    for query, points in sorted(fetched.items()):
        minutes = {int((stamp - origin) / timedelta(minutes=1)): value for stamp, value in points.items()}
        out.append(History(query.metric, dict(query.tags), minutes, sqs=query.metric.startswith("aws.sqs.")))
    return out
