"""Time the evaluation half of `obs backtest`: an environment's monitors replayed over N days of one-minute history
(synthetic, healthy, with one planted incident a day), once fetched. The fetch is not timed here: its cost is the
calls and points it reports (`obs backtest` prints them on stderr).

Run: .venv/bin/python bench/backtest_bench.py [--definitions DIR] [--env ENV] [--days N] [--queue Q]...
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from sync.aws.core.datadog_names import Read, read_for
from sync.cli.replaying import replay_paused
from sync.core.backtest.readings import History, readings
from sync.core.backtest.reads import reads
from sync.core.backtest.summary import incidents
from sync.core.evaluation import notes
from sync.core.kinds import SLO
from sync.definitions.load import load
from sync.expand import backtest as placed
from sync.expand.desired import expand_env

WARMUP = 360
# A healthy value per CloudWatch metric, and what an incident (the first 40 minutes of each day's 10th hour) shows.
HEALTHY = {"ApproximateAgeOfOldestMessage": 20.0, "NumberOfMessagesDeleted": 50.0, "NumberOfMessagesPublished": 40.0}
INCIDENT = {"ApproximateAgeOfOldestMessage": 50_000.0}


def _value(read: Read, minute: int) -> float:
    name = read.source.metric
    if (minute - WARMUP) % 1440 in range(600, 640) and name in INCIDENT:
        return INCIDENT[name]
    return HEALTHY.get(name, 0.0 if "Visible" in name or "Failed" in name else 30.0)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--definitions", type=Path, default=Path(__file__).resolve().parent.parent)
    parser.add_argument("--env", default="prod")
    parser.add_argument("--days", type=int, default=14)
    parser.add_argument("--queue", action="append", default=[])
    args = parser.parse_args()
    defs = load(args.definitions)
    env = defs.environment(args.env)
    resources = expand_env(defs, env)
    slos = {r.key: r.body for r in resources if r.kind == SLO}
    wanted: set[Read] = set()
    for resource in placed.chosen(resources, args.queue):
        for metric, tags in reads(resource.body, slos).filters:
            read = read_for(metric, tags, env.region, env.account_id, env.account_tag)
            if isinstance(read, Read):
                wanted.add(read)
    minutes = WARMUP + args.days * 1440
    history = [
        History(
            r.name, r.tags(env.account_tag), {m: _value(r, m) for m in range(minutes)}, r.source.namespace == "AWS/SQS"
        )
        for r in sorted(wanted, key=repr)
    ]
    origin = datetime(2026, 1, 1, tzinfo=UTC)
    started = time.perf_counter()
    setup = placed.setup(defs, env, resources, args.queue, origin, minutes, WARMUP, {})
    used: set[notes.Assumption] = set()
    found = readings(history, env.metrics_source, used)
    done = replay_paused(setup, found, used)  # as `obs backtest` replays
    seconds = time.perf_counter() - started
    result = {
        "env": env.name,
        "days": args.days,
        "monitors": len(setup.monitors),
        "series": len(history),
        "readings": len(found),
        "seconds": round(seconds, 1),
        "incidents": len(incidents(done)),
        "not_backtested": len(done.not_backtested),
    }
    print(json.dumps(result))


if __name__ == "__main__":
    main()
