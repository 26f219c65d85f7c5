"""Pure: how `obs backtest --source datadog` reads history from Datadog's v2 timeseries query
(POST /api/v2/query/timeseries, https://docs.datadoghq.com/api/latest/metrics/#query-timeseries-data-across-multiple-products).

A series is keyed by the metric query a monitor's leaf reads, as written: its space aggregation, metric and tag
filter, and `.as_count()` where the leaf has it (Datadog then sums each minute instead of averaging it). Datadog
merges what the filter selects with the leaf's space aggregation, so the one series it answers is what that leaf
reads; the model's own space aggregation of one series leaves it as it is. Any metric Datadog holds can be read
this way, custom and Agent metrics included.

Each request asks for one UTC day at 1-minute intervals: Datadog answers at most 1,500 points per series and
query (beyond that it widens the interval, which the one-minute model would misread), and a day is 1,440. A
whole day is also what the cache keeps once it is finished.
"""

from __future__ import annotations

import hashlib
import itertools
import json
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from sync.core.backtest.fetched import Points
from sync.core.metric_query import Leaf

INTERVAL_MS = 60_000
MAX_POINTS = 1_500  # per series and query, beyond which Datadog widens the interval
# Datadog keeps metrics at full resolution for 15 months
# (https://docs.datadoghq.com/developers/guide/data-collection-resolution-retention/): 450 days stays inside.
RETENTION = timedelta(days=450)
# Queries a request: the API documents no limit; 16 series-days keep one answer (16 x 1,440 points) small,
# and a request that fails is cheap to repeat.
BATCH = 16


class Unreadable(ValueError):
    """An answer the model cannot use; the message says why."""


@dataclass(frozen=True, order=True)
class Query:
    """One series read from Datadog: a leaf's space aggregation, metric, tag filter and `.as_count()`."""

    space: str
    metric: str
    tags: tuple[tuple[str, str], ...]
    count: bool = False

    @property
    def text(self) -> str:
        scope = ",".join(f"{key}:{value}" for key, value in self.tags) or "*"
        return f"{self.space}:{self.metric}{{{scope}}}" + (".as_count()" if self.count else "")


def query_for(leaf: Leaf) -> Query:
    return Query(leaf.space, leaf.metric, leaf.tags, leaf.modifier == "as_count")


def overlapping(queries: Iterable[Query]) -> dict[Query, str]:
    """Queries the model cannot keep apart: a leaf selects every series of its metric whose tags include its
    filter, so a query whose filter another query's includes (or equals, with another aggregation) would
    merge that one's already merged series into its own. Those are not read, with why."""
    unique = sorted(set(queries))
    out: dict[Query, str] = {}
    for query in unique:
        mine = set(query.tags)
        other = next((o for o in unique if o != query and o.metric == query.metric and mine <= set(o.tags)), None)
        if other is not None:
            out[query] = (
                f"{query.text} would also select the series obs reads for {other.text}: Datadog answers each "
                "metric query merged, and the model cannot take them apart"
            )
    return out


def batches(queries: Sequence[Query]) -> Iterator[Sequence[Query]]:
    for first in range(0, len(queries), BATCH):
        yield queries[first : first + BATCH]


def request(batch: Sequence[Query], start: datetime, end: datetime) -> dict[str, Any]:
    """The body of one request (TimeseriesFormulaQueryRequest): the batch's queries, no formulas, so each
    answered series names its query by index."""
    return {
        "data": {
            "type": "timeseries_request",
            "attributes": {
                "from": _ms(start),
                "to": _ms(end),
                "interval": INTERVAL_MS,
                "queries": [{"data_source": "metrics", "query": q.text, "name": f"q{i}"} for i, q in enumerate(batch)],
            },
        }
    }


def points(answer: Any, size: int, start: datetime, end: datetime) -> list[Points]:
    """Each query's points from an answer (TimeseriesFormulaQueryResponse): `times` in milliseconds, one
    `values` list per answered series, `series[i].query_index` naming its query; null values are minutes
    without data. A query that selected nothing answers no series."""
    attributes = _attributes(answer)
    times = [int(t) for t in attributes.get("times") or []]
    steps = {b - a for a, b in itertools.pairwise(times)}
    if steps and min(steps) > INTERVAL_MS:
        raise Unreadable(
            f"Datadog answered at {min(steps) // 1000}-second intervals, not 1 minute: it no longer holds "
            "this period at full resolution"
        )
    out: list[Points] = [{} for _ in range(size)]
    series = attributes.get("series") or []
    values = attributes.get("values") or []
    for described, row in zip(series, values, strict=False):
        index = described.get("query_index") if isinstance(described, Mapping) else None
        if not isinstance(index, int) or not 0 <= index < size:
            raise Unreadable(f"Datadog answered a series for a query it was not asked ({index!r})")
        for stamp, value in zip(times, row or [], strict=False):
            at = datetime.fromtimestamp(stamp // 1000, UTC).replace(second=0)
            if value is not None and start <= at < end:
                out[index][at] = float(value)
    return out


def _attributes(answer: Any) -> Mapping[str, Any]:
    data = answer.get("data") if isinstance(answer, Mapping) else None
    attributes = data.get("attributes") if isinstance(data, Mapping) else None
    if not isinstance(attributes, Mapping):
        errors = answer.get("errors") if isinstance(answer, Mapping) else None
        raise Unreadable(f"Datadog answered no timeseries{f': {errors}' if errors else ''}")
    return attributes


def cache_key(query: Query, host: str, start: datetime, end: datetime) -> str:
    """A hash of what was asked: the source, the org's site, the query and the period."""
    what = {"source": "datadog", "host": host, "query": query.text, "start": _ms(start), "end": _ms(end)}
    return hashlib.sha256(json.dumps(what, sort_keys=True).encode()).hexdigest()


def _ms(moment: datetime) -> int:
    return int(moment.timestamp()) * 1000
