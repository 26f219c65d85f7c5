"""Time the fetch half of `obs backtest --source datadog` against the rate limit: N days of every series an
environment's monitors read, asked of the fake Datadog's v2 timeseries query (in its own process, with a
latency per request and a budget of L requests per P seconds, answered with Datadog's X-RateLimit-* headers),
through the same code `obs backtest` runs, nothing cached.

Datadog publishes no limit for the timeseries query: its answers carry one, and obs paces itself by those
headers. The fetch is as fast as the limit allows when its wall time is close to the minimum the budget permits,
(ceil(n/L) - 1) x P for n requests starting as a window opens; the goal is within 2x of it.

Run: .venv/bin/python bench/backtest_fetch_bench.py [--definitions DIR] [--env ENV] [--days N]
     [--latency 0.02] [--rate-limit 20] [--period 2]
"""

from __future__ import annotations

import argparse
import contextlib
import io
import math
import os
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the fake Datadog lives in tests/

from fake_process import FakeProcess

from sync.aws.backtest.cache import Cache
from sync.cli import replaying
from sync.definitions.load import load

QUERY = "/api/v2/query/timeseries"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--definitions", type=Path, default=Path(__file__).resolve().parent.parent)
    parser.add_argument("--env", default="prod")
    parser.add_argument("--days", type=int, default=14)
    parser.add_argument("--latency", type=float, default=0.02)
    parser.add_argument("--rate-limit", type=int, default=20)
    parser.add_argument("--period", type=float, default=2.0)
    args = parser.parse_args()
    defs = load(args.definitions)
    side = replaying.side(defs, args.env, [], "datadog")
    now = datetime.now(UTC).replace(hour=0, minute=0, second=0, microsecond=0)
    span = replaying.period(now - timedelta(days=args.days), now, now, "datadog")
    with FakeProcess(args.latency, args.rate_limit, args.period) as dd:
        os.environ.update(DD_API_KEY=dd.api_key, DD_APP_KEY=dd.app_key, DD_HOST=dd.url)
        env = defs.environment(args.env)
        minutes = range(int(span.origin.timestamp()), int(span.end.timestamp()), 60)
        for queue in defs.env_queues[env.name]:  # a healthy age for every queue: the fetch's cost is in the asking
            tags = {"queuename": env.name_of("queue", queue.name), "region": env.region}
            dd.put_series("aws.sqs.approximate_age_of_oldest_message", tags, dict.fromkeys(minutes, 20.0))
        elapsed = time.monotonic() - dd.opened  # start as one of the fake's windows opens: its budget is full
        time.sleep(math.ceil(elapsed / args.period) * args.period - elapsed + 0.005)
        began = time.perf_counter()
        with contextlib.redirect_stderr(io.StringIO()) as said:
            fetched, _ = replaying.read_history([side], span, "datadog", Cache(None))
        wall = time.perf_counter() - began
        log = list(dd.log)
    asked = [r for r in log if r.path == QUERY]
    throttled = sum(r.status == 429 for r in asked)
    sent = len(asked) - throttled
    floor = (math.ceil(sent / args.rate_limit) - 1) * args.period
    queries = len(set(side.wanted.values()))
    print(f"| figure | value |\n|---|---:|\n| queries ({args.env}, {args.days} days) | {queries} |")
    print(f"| requests answered (429 answers) | {sent} ({throttled}) |")
    print(f"| data points | {fetched.datapoints:,} |")
    print(f"| budget | {args.rate_limit} requests per {args.period:g} s, {args.latency * 1000:g} ms per request |")
    print(f"| wall of the fetch | {wall:.2f} s |")
    print(f"| minimum the budget allows, (ceil(n/L) - 1) x P | {floor:.2f} s |")
    ratio = wall / floor if floor else float("nan")
    print(f"| wall / minimum (goal <= 2) | {ratio:.2f} |")
    print(f"\nobs said: {said.getvalue().strip()}")


if __name__ == "__main__":
    main()
