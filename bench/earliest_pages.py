"""How soon each metric pages after an incident, per environment, metric and queue class, under each metrics
source, from `obs test`.

Runs the example's scenarios twice on a scratch copy of the definitions: as they are (the AWS integration's
crawler), and with every environment on CloudWatch Metric Streams (`metrics_source: streams`) and every
scenario's series collected that way. For each expectation that a monitor pages (or alerts anyone) within a
bound, it takes the minutes from the incident to the first page (or alert) at the latest arrival of the data
(what on call can rely on) and, beside it, at the earliest arrival (the floor the data's arrival sets: no
monitor setting can page sooner), and prints the fastest per environment, metric and class as a Markdown
table, prod first (the documentation's build puts it in docs/testing.md). Expectations are not judged: under
streams some bounds are looser than they need be, which is the point of the comparison. The two runs share
nothing, so they run at once, one process each.

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
Cell = tuple[str, str, str]  # environment, metric (and whether it pages or alerts), class
Table = dict[Cell, tuple[int, int]]  # minutes after the incident: at the latest arrival, at the earliest


def _scratch(definitions: Path, target: Path, source: str) -> None:
    shutil.copytree(definitions, target, ignore=shutil.ignore_patterns(".*", "sync", "tests", "bench"))
    for path in (target / "scenarios").glob("*.yaml"):
        if not _bounded(yaml.safe_load(path.read_text())):  # a healthy day adds nothing to the table
            path.unlink()
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


def _bounded(scenario: dict[str, Any]) -> bool:
    """Whether the scenario expects a monitor to page or alert within a bound: what the table is made of."""
    expected = scenario.get("expect") or []
    return any(isinstance(e.get(k), dict) and "within" in e[k] for e in expected for k in ("pages", "alerts"))


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
            what = "page" if pages else "alert"
            latest, soonest = expectation.get(f"first_{what}"), expectation.get(f"earliest_{what}")
            after = _AFTER.search(expectation["detail"])
            if latest is None or soonest is None or after is None:
                continue
            names = sorted({k.split("/")[2] for k in expectation["keys"]})
            metric = names[0] if len(names) == 1 else "any monitor" if len(names) > 3 else " or ".join(names)
            cell = (result["env"], f"{metric} ({what})", classes[queue])
            start = int(after.group(1))
            was = table.get(cell, (10**9, 10**9))
            table[cell] = (min(was[0], latest - start), min(was[1], soonest - start))
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
    print("| environment | metric | class | crawler (min) | crawler floor | metric streams (min) | streams floor |")
    print("|---|---|---|---|---|---|---|")
    for env, metric, cls in sorted(set(tables["crawler"]) | set(tables["streams"]), key=_prod_first):
        cells = [_cell(tables[s].get((env, metric, cls))) for s in sources]
        print(f"| {env} | {metric} | {cls} | {' | '.join(cells)} |")
    return 0


def _prod_first(cell: Cell) -> tuple[bool, Cell]:
    return cell[0] != "prod", cell


def _cell(minutes: tuple[int, int] | None) -> str:
    return " - | - " if minutes is None else f"{minutes[0]} | {minutes[1]}"


if __name__ == "__main__":
    sys.exit(main())
