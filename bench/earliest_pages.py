"""The earliest page after an incident, per metric and queue class, under each metrics source, from `obs test`.

Runs the example's scenarios twice on a scratch copy of the definitions: as they are (the AWS integration's
crawler), and with every environment on CloudWatch Metric Streams (`metrics_source: streams`) and every
scenario's series collected that way. For each expectation that a monitor pages (or alerts anyone) within a
bound, it takes the minutes from the incident to the first page (or alert) the model shows, and prints the
fastest per metric and class as a Markdown table (the documentation's build puts it in docs/testing.md).
Expectations are not judged: under streams some bounds are looser than they need be, which is the point of the
comparison. The two runs share nothing, so they run at once, one process each.

Run: .venv/bin/python bench/earliest_pages.py [--definitions DIR]
"""

from __future__ import annotations

import argparse
import concurrent.futures
import contextlib
import io
import json
import re
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from sync.cli.app import main as obs

_AFTER = re.compile(r"after minute (\d+)")
Table = dict[tuple[str, str], int]


def _scratch(definitions: Path, target: Path, source: str) -> None:
    shutil.copytree(definitions, target, ignore=shutil.ignore_patterns(".*", "sync", "tests", "bench"))
    if source == "crawler":
        return
    for path in (target / "environments").glob("*.yaml"):
        doc = yaml.safe_load(path.read_text())
        doc["metrics_source"] = source
        path.write_text(yaml.safe_dump(doc, sort_keys=False, width=10_000))
    for path in (target / "scenarios").glob("*.yaml"):
        doc = yaml.safe_load(path.read_text())
        doc["collection"] = source
        path.write_text(yaml.safe_dump(doc, sort_keys=False, width=10_000))


def _results(definitions: Path) -> list[dict[str, Any]]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        obs(["--definitions", str(definitions), "test", "--format", "json"])
    results: list[dict[str, Any]] = json.loads(out.getvalue())["results"]
    return results


def earliest(definitions: Path, classes: dict[str, str]) -> Table:
    table: Table = {}
    for result in _results(definitions):
        queue = yaml.safe_load((definitions / result["file"]).read_text())["queue"]
        for expectation in result["expectations"]:
            pages = "pages within" in expectation["expect"]
            if not pages and "alerts within" not in expectation["expect"]:
                continue
            first = expectation.get("first_page" if pages else "first_alert")
            after = _AFTER.search(expectation["detail"])
            if first is None or after is None:
                continue
            names = sorted({k.split("/")[2] for k in expectation["keys"]})
            metric = names[0] if len(names) == 1 else "any monitor" if len(names) > 3 else " or ".join(names)
            cell = (f"{metric} ({'page' if pages else 'alert'})", classes[queue])
            table[cell] = min(table.get(cell, 10**9), first - int(after.group(1)))
    return table


def _under(definitions: Path, source: str, classes: dict[str, str]) -> Table:
    with tempfile.TemporaryDirectory() as tmp:
        scratch = Path(tmp) / source
        _scratch(definitions, scratch, source)
        return earliest(scratch, classes)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--definitions", type=Path, default=Path(__file__).resolve().parent.parent)
    args = parser.parse_args()
    inventory = yaml.safe_load((args.definitions / "queues.yaml").read_text())
    classes = {q["name"]: q["class"] for q in inventory["queues"]}
    sources = ("crawler", "streams")
    with concurrent.futures.ProcessPoolExecutor(len(sources)) as pool:
        runs = {source: pool.submit(_under, args.definitions, source, classes) for source in sources}
        tables = {source: run.result() for source, run in runs.items()}
    print("| metric | class | crawler (min) | metric streams (min) |")
    print("|---|---|---|---|")
    for metric, cls in sorted(set(tables["crawler"]) | set(tables["streams"])):
        cells = [str(tables[s].get((metric, cls), "-")) for s in ("crawler", "streams")]
        print(f"| {metric} | {cls} | {cells[0]} | {cells[1]} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
