"""How long `obs test` of the shipped example takes: wall time, CPU time and peak memory, best of N runs.

Each run is a fresh `obs test` process (as a person or CI runs it), so nothing is warm but the operating
system's file cache. It prints one line per run and the best, and the SHA-256 of what the runs printed, so a
change meant only for speed shows it printed the same bytes (the text output and, with --json-output, the JSON).

Run: .venv/bin/python bench/obs_test.py [--definitions DIR] [--runs N] [--json-output] [-- extra obs test args]
"""

from __future__ import annotations

import argparse
import hashlib
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def one_run(definitions: Path, extra: list[str]) -> tuple[float, float, int, str]:
    """(wall s, CPU s, peak RSS MB, SHA-256 of stdout) of one `obs test` process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "sync.cli", "--definitions", str(definitions), "test", *extra],
        capture_output=True,
        check=False,
        cwd=ROOT,
        env={**os.environ, "NO_COLOR": "1"},
    )
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if done.returncode not in (0, 1):
        sys.exit(f"obs test exited {done.returncode}:\n{done.stderr.decode()}")
    return wall, cpu, after.ru_maxrss // 1024, hashlib.sha256(done.stdout).hexdigest()[:16]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--definitions", type=Path, default=ROOT, help="the definitions folder (the example)")
    parser.add_argument("--runs", type=int, default=3, help="runs to take the best of")
    parser.add_argument("--json-output", action="store_true", help="also hash one run of --format json")
    parser.add_argument("extra", nargs="*", help="more arguments for obs test (after --)")
    options = parser.parse_args(argv)
    best: tuple[float, float] | None = None
    digests = set()
    for n in range(options.runs):
        wall, cpu, rss, digest = one_run(options.definitions, options.extra)
        digests.add(digest)
        print(f"run {n + 1}: {wall:.2f} s wall, {cpu:.2f} s CPU, peak RSS {rss} MB (of any run so far), text {digest}")
        best = (wall, cpu) if best is None else (min(best[0], wall), min(best[1], cpu))
    if options.json_output:
        *_, digest = one_run(options.definitions, [*options.extra, "--format", "json"])
        print(f"json output {digest}")
    assert best is not None
    print(
        f"best of {options.runs}: {best[0]:.2f} s wall, {best[1]:.2f} s CPU on {os.cpu_count()} CPUs, load {os.getloadavg()[0]:.1f}"
    )
    if len(digests) > 1:
        print("the runs printed different output")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
