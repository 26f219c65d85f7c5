"""Metric history for `obs backtest --source datadog`, read with Datadog's v2 timeseries query: one UTC day a
request, up to 16 series a request, finished days from the cache (sync.core.backtest.timeseries says why)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from sync.core.backtest import fetched
from sync.core.backtest.fetched import Store, days, settled
from sync.core.backtest.timeseries import (
    RETENTION,
    Query,
    Unreadable,
    batches,
    cache_key,
    overlapping,
    points,
    request,
)
from sync.datadog.client import Datadog, RequestFailed
from sync.errors import ObsError

LABEL = "POST /api/v2/query/timeseries"
PERMISSION = "timeseries_query"

Fetched = fetched.Fetched[Query]


def fetch(
    dd: Datadog, queries: Sequence[Query], start: datetime, end: datetime, now: datetime, cache: Store
) -> Fetched:
    check_period(start, end, now)
    found = Fetched(unread=overlapping(queries))
    wanted = [q for q in sorted(set(queries)) if q not in found.unread]
    found.points = {q: {} for q in wanted}
    before = dd.calls[LABEL]
    try:
        for day_start, day_end in days(start, end):
            _day(dd, wanted, day_start, day_end, settled(day_end, now), cache, found)
    finally:
        found.calls = dd.calls[LABEL] - before  # every request sent, a throttled or repeated one too
    return found


def check_period(start: datetime, end: datetime, now: datetime) -> None:
    fetched.check_period(start, end, now, RETENTION, "Datadog", f"15 months, taken as {RETENTION.days} days")


def _day(
    dd: Datadog, queries: Sequence[Query], start: datetime, end: datetime, keep: bool, cache: Store, found: Fetched
) -> None:
    wanted = []
    for query in queries:
        kept = cache.get(cache_key(query, dd.host, start, end)) if keep else None
        if kept is None:
            wanted.append(query)
        else:
            found.points[query].update(kept)
            found.cached += 1
    for batch in batches(wanted):
        answer = _ask(dd, batch, start, end)
        try:
            day = points(answer, len(batch), start, end)
        except Unreadable as exc:
            raise ObsError.of(
                f"cannot read {fetched.minute(start)} to {fetched.minute(end)} from Datadog ({dd.host}): {exc}",
                "give a later --from, or fewer --days",
            ) from None
        for query, series in zip(batch, day, strict=True):
            found.points[query].update(series)
            found.datapoints += len(series)
            if keep:
                cache.put(cache_key(query, dd.host, start, end), series)


def _ask(dd: Datadog, batch: Sequence[Query], start: datetime, end: datetime) -> object:
    try:
        return dd.query_timeseries(request(batch, start, end))
    except RequestFailed as exc:
        if exc.status == 403:
            raise ObsError.of(
                f"Datadog ({dd.host}) refused the timeseries query: {exc.detail}",
                f"give the application key the {PERMISSION} permission (for a scoped key, the {PERMISSION} "
                "scope): obs backtest only reads metrics",
            ) from None
        if exc.status == 401:
            raise ObsError.of(
                f"Datadog ({dd.host}) did not accept the keys: {exc.detail}",
                "check that DD_API_KEY and DD_APP_KEY are valid keys of the environment's org",
            ) from None
        raise ObsError.of(f"could not read metrics from Datadog: {exc}", "try again") from None
