"""The v2 timeseries query (POST /api/v2/query/timeseries) over series a test puts in, answering in the
published shape (TimeseriesFormulaQueryResponse: data.attributes.times in milliseconds, one values list per
series, series[i].query_index and group_tags).

Each query is a classic metric query, `space:metric{tag:value,...}` with an optional `.as_count()`: the stored
series of the metric whose tags include the filter, each rolled up per interval (the average of its points, the
sum under `.as_count()`), then merged across series by the space aggregation. A query that selects nothing
answers no series. Asked for more than MAX_POINTS intervals, the answer widens the interval, as the spec says
the API does ("May be overridden by a larger interval if the query would result in too many points"); a range
that ends before it starts is refused."""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from typing import Any

from .common import Body, Rejected

MAX_POINTS = 1500
_QUERY = re.compile(r"^(avg|max|min|sum):([A-Za-z_][\w.]*)\{([^}]*)\}(\.as_count\(\))?$")
_SPACE: dict[str, Callable[[list[float]], float]] = {
    "avg": lambda v: sum(v) / len(v),
    "max": max,
    "min": min,
    "sum": sum,
}


class Timeseries:
    def __init__(self) -> None:
        self._series: list[tuple[str, dict[str, str], dict[int, float]]] = []

    def put(self, metric: str, tags: Mapping[str, str], points: Mapping[int, float]) -> None:
        """A series' points by epoch second; again for the same metric and tags adds to it."""
        for name, known, stored in self._series:
            if name == metric and known == dict(tags):
                stored.update(points)
                return
        self._series.append((metric, dict(tags), dict(points)))

    def query(self, body: Any) -> Body:
        attributes = _attributes(body)
        start, end = int(attributes["from"]), int(attributes["to"])
        if end <= start:
            raise Rejected(400, "'to' must be after 'from'")  # wording unverified
        interval = int(attributes.get("interval") or 60_000)
        if interval < 1000:
            raise Rejected(400, "interval must be at least 1000 ms")  # wording unverified
        if math.ceil((end - start) / interval) > MAX_POINTS:
            interval = math.ceil((end - start) / MAX_POINTS / 60_000) * 60_000  # whole minutes, as the rollups are
        first = start - start % interval
        times = list(range(first, end, interval))
        series: list[Body] = []
        values: list[list[float | None]] = []
        for index, query in enumerate(attributes["queries"]):
            row = self._row(query, times, interval)
            if row is not None:
                series.append({"group_tags": [], "query_index": index, "unit": None})
                values.append(row)
        answer = {"series": series, "times": times, "values": values}
        return {"data": {"type": "timeseries_response", "attributes": answer}}

    def _row(self, query: Any, times: list[int], interval: int) -> list[float | None] | None:
        if not isinstance(query, Mapping) or query.get("data_source") != "metrics":
            raise Rejected(400, "only metrics queries are supported here")  # the fake's limit, not the API's
        found = _QUERY.match(str(query.get("query") or ""))
        if found is None:
            raise Rejected(400, f"Error parsing query: {query.get('query')!r}")  # wording unverified
        space, metric, scope, count = found.groups()
        wanted = dict(part.split(":", 1) for part in scope.split(",") if part and part != "*")
        chosen = [p for m, tags, p in self._series if m == metric and all(tags.get(k) == v for k, v in wanted.items())]
        if not chosen:
            return None
        first = times[0] if times else 0
        buckets: list[dict[int, list[float]]] = []
        for points in chosen:
            bucketed: dict[int, list[float]] = {}
            for second, value in points.items():
                bucketed.setdefault((second * 1000 - first) // interval, []).append(value)
            buckets.append(bucketed)
        row: list[float | None] = []
        for n in range(len(times)):
            rolled = [sum(b[n]) if count else sum(b[n]) / len(b[n]) for b in buckets if n in b]
            row.append(_SPACE[space](rolled) if rolled else None)
        return row


def _attributes(body: Any) -> Mapping[str, Any]:
    data = body.get("data") if isinstance(body, Mapping) else None
    if not isinstance(data, Mapping) or data.get("type") != "timeseries_request":
        raise Rejected(400, "data.type must be timeseries_request")  # wording unverified
    attributes = data.get("attributes")
    if not isinstance(attributes, Mapping) or not all(k in attributes for k in ("from", "to", "queries")):
        raise Rejected(400, "data.attributes needs from, to and queries")  # wording unverified
    return attributes
