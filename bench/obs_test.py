"""How long `obs test` of the shipped example takes: wall time, CPU time and peak memory, best of N runs.

Each run is a fresh `obs test` process (as a person or CI runs it), so nothing is warm but the operating
system's file cache. It prints one line per run and the best, with a digest of what the run printed, so a
change meant only for speed shows it printed the same bytes. `--base REV` also runs obs as it was at a git
revision (its `sync` package, on the same definitions), alternating with this checkout's run by run so both
see the same machine load, and says whether the two printed the same.

Run: .venv/bin/python bench/obs_test.py [--definitions DIR] [--runs N] [--base REV] [--format text|json]
"""

from __future__ import annotations

import argparse
import hashlib
import os
import resource
import subprocess
import sys
import tarfile
import tempfile
import time
from dataclasses import dataclass, field
from io import BytesIO
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


@dataclass
class Timings:
    label: str
    walls: list[float] = field(default_factory=list)
    cpus: list[float] = field(default_factory=list)
    digests: set[str] = field(default_factory=set)

    def line(self) -> str:
        best = f"best {min(self.walls):.2f} s wall, {min(self.cpus):.2f} s CPU"
        return f"{self.label}: {best} (of {len(self.walls)} runs)"


def one_run(code: Path, definitions: Path, extra: list[str]) -> tuple[float, float, str]:
    """(wall s, CPU s, digest of stdout) of one `obs test` process running the `sync` package under `code`."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "sync.cli", "--definitions", str(definitions), "test", *extra],
        capture_output=True,
        check=False,
        cwd=code,  # `-m` puts the working folder first on the path: its `sync` is the one imported
        env={**os.environ, "NO_COLOR": "1"},
    )
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if done.returncode not in (0, 1):
        sys.exit(f"obs test ({code}) exited {done.returncode}:\n{done.stderr.decode()[-3000:]}")
    return wall, cpu, hashlib.sha256(done.stdout).hexdigest()[:16]


def extract(revision: str, into: Path) -> Path:
    """The `sync` package as it was at `revision`, written under `into`."""
    archive = subprocess.run(["git", "archive", revision, "sync"], cwd=ROOT, capture_output=True, check=True).stdout
    with tarfile.open(fileobj=BytesIO(archive)) as tar:
        tar.extractall(into, filter="data")
    return into


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--definitions", type=Path, default=ROOT, help="the definitions folder (the example)")
    parser.add_argument("--runs", type=int, default=3, help="runs to take the best of")
    parser.add_argument("--base", metavar="REV", help="also time obs at this git revision, alternating runs")
    parser.add_argument("--format", choices=("text", "json"), default="text", help="obs test's output format")
    options = parser.parse_args(argv)
    extra = ["--format", options.format]
    with tempfile.TemporaryDirectory() as scratch:
        codes = [Timings("this checkout")]
        paths = [ROOT]
        if options.base:
            codes.append(Timings(f"at {options.base}"))
            paths.append(extract(options.base, Path(scratch)))
        for n in range(options.runs):
            for timings, code in zip(codes, paths, strict=True):
                wall, cpu, digest = one_run(code, options.definitions.resolve(), extra)
                timings.walls.append(wall)
                timings.cpus.append(cpu)
                timings.digests.add(digest)
                print(f"run {n + 1}, {timings.label}: {wall:.2f} s wall, {cpu:.2f} s CPU, output {digest}", flush=True)
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss // 1024
    for timings in codes:
        print(timings.line())
    print(f"peak RSS of any run {peak} MB; {os.cpu_count()} CPUs, load {os.getloadavg()[0]:.1f} at the end")
    digests = set().union(*(t.digests for t in codes))
    print("every run printed the same" if len(digests) == 1 else f"the runs printed {len(digests)} different outputs")
    return 0 if len(digests) == 1 else 1


if __name__ == "__main__":
    sys.exit(main())
