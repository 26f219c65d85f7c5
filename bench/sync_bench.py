"""Time `obs sync` and `obs plan` against the fake Datadog with a latency per request, and count the API calls.

For the shipped example and a generated set of about 1,000 monitors in prod (125 queues): the first sync
into an empty org, a no-change plan, and a plan and sync after changing the DLQ threshold (one monitor per
queue).

Run: .venv/bin/python bench/sync_bench.py [--queues 125] [--latency 0.02] [--rate-limit N]
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the fake Datadog lives in tests/

import fleet

from sync.cli.app import main as obs
from tests.fakedd import FakeDatadog, Faults


def measure(dd: FakeDatadog, definitions: Path, *argv: str) -> tuple[int, float, int, int, str]:
    """Run one obs command; its exit code, wall seconds, API calls, 429 answers and last line of output."""
    dd.reset_log()
    out = io.StringIO()
    began = time.perf_counter()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        code = obs(["--definitions", str(definitions), *argv])
    took = time.perf_counter() - began
    lines = out.getvalue().strip().splitlines()
    throttled = sum(r.status == 429 for r in dd.log)
    return code, took, dd.calls(), throttled, lines[-1] if lines else ""


STEPS = ("sync, empty org", "plan, no change", "plan, dlq changed", "sync, dlq changed")


def run(name: str, definitions: Path, faults: Faults) -> list[tuple[str, str, float, int, int, str]]:
    rows = []
    with FakeDatadog(faults=faults) as dd:
        os.environ.update(DD_API_KEY=dd.api_key, DD_APP_KEY=dd.app_key, DD_HOST=dd.url)
        for step in STEPS:
            if step == "plan, dlq changed":  # one threshold: one monitor per queue changes
                dlq = definitions / "monitors" / "dlq.yaml"
                dlq.write_text(dlq.read_text().replace("thresholds: {critical: 0}", "thresholds: {critical: 1}"))
            code, took, calls, throttled, last = measure(dd, definitions, step.split(",")[0], "--env", "prod")
            rows.append((name, step, took, calls, throttled, f"exit {code}: {last}"))
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queues", type=int, default=125, help="generated queues (125 give about 1,000 prod monitors)")
    parser.add_argument("--latency", type=float, default=0.02, help="seconds added to every request")
    parser.add_argument("--rate-limit", type=int, default=None, help="requests per 10 s per endpoint group")
    options = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as scratch:
        example = fleet.copy_example(Path(scratch) / "example")
        generated = fleet.write(Path(scratch) / "fleet", options.queues)
        for name, definitions in (("example", example), (f"{options.queues} queues", generated)):
            faults = Faults(latency=options.latency, rate_limit=options.rate_limit)
            rows += run(name, definitions, faults)
    print(f"latency {options.latency * 1000:.0f} ms per request, rate limit {options.rate_limit or 'none'}")
    print(f"{'definitions':<12} {'step':<24} {'wall s':>7} {'calls':>6} {'429s':>5}  result")
    for name, step, took, calls, throttled, result in rows:
        print(f"{name:<12} {step:<24} {took:>7.2f} {calls:>6} {throttled:>5}  {result}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
