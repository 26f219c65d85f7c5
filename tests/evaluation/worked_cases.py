"""Small builders for the worked-example tests: monitors, series and arrival times as Datadog's and AWS's pages
describe them, fed straight to the evaluation model."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from sync.core.evaluation.monitor import run
from sync.core.evaluation.series import Series
from sync.core.evaluation.states import ALERT, OK

TAGS = {"queuename": "foo"}
CRAWL_EVERY = 10  # https://docs.datadoghq.com/integrations/guide/cloud-metric-delay/: the crawler polls every 10 min
AVAILABLE_AFTER = 2  # the same page: CloudWatch's own availability delay for 1-minute data is about 2 minutes


def monitor(query: str, delay_seconds: int, **options: Any) -> dict[str, Any]:
    defaults: dict[str, Any] = {"require_full_window": False, "evaluation_delay": delay_seconds}
    critical = float(query.rsplit(" ", 1)[1])
    return {
        "type": "query alert",
        "query": query,
        "options": {"thresholds": {"critical": critical}, **defaults, **options},
        "message": "",
        "tags": [],
    }


def crawled(minute: int, phase: int, queueing: int = 0, available_after: int = AVAILABLE_AFTER) -> int:
    """When the crawler brings in the point stamped `minute`: the first crawl (at minutes ≡ phase mod 10) at or
    after the point is available in CloudWatch, plus any queueing."""
    available = minute + available_after
    return available + (phase - available) % CRAWL_EVERY + queueing


def series(
    values: Mapping[int, float], arrive: Callable[[int], int], metric: str = "m", tags: Mapping[str, str] = TAGS
) -> Series:
    return Series(metric, dict(tags), dict(values), {m: arrive(m) for m in values})


def states(body: Mapping[str, Any], data: Series, duration: int, open_end: bool = True) -> dict[int, str]:
    result = run("k", body, [data], duration, open_end, set())
    return {step.t: step.state for step in result.steps}


def first(found: Mapping[int, str], state: str = ALERT, after: int = 0) -> int | None:
    """The first minute at or after `after` the monitor is in `state`."""
    return next((t for t in sorted(found) if t >= after and found[t] == state), None)


def recovered_at(found: Mapping[int, str], after: int) -> int | None:
    return first(found, OK, after)
