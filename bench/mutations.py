"""Mutation check of the scenarios: break the example's metric definitions one way at a time and count how
many breakages `obs test` catches.

Each mutation changes alert behaviour the way a careless edit would: a threshold x10, /10, x100 or /100, the
comparator flipped, the evaluation window x6, the time aggregator swapped, a paging metric sent to chat only,
or the monitor removed. A mutation is killed
when `obs test` fails on the mutated definitions (exit 1); it survives when every scenario still passes, which
means no scenario pins that behaviour. Mutations the definitions refuse to load (a validation rule caught the
edit) are counted apart: they are caught, but not by a scenario.

Run: .venv/bin/python bench/mutations.py [--definitions DIR] [--only METRIC] [--jobs N] [--format text|json]
Exit 1 when a mutation survives.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import contextlib
import io
import json
import os
import re
import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from sync.cli.app import main as obs

Doc = dict[str, Any]

# The time aggregator each one is swapped for: the swap that changes behaviour most for that aggregator.
_SWAP = {"avg": "max", "max": "min", "min": "max", "sum": "avg"}
_FLIP = {">": "<", ">=": "<=", "<": ">", "<=": ">="}
_HEAD = re.compile(r"^(avg|sum|max|min)\(last_(\d+)([mh])\)")
_COMPARATOR = re.compile(r"\s(>=|<=|>|<)(\s*\S+)$")
_WINDOW_MAX = {"m": 10080, "h": 168}


@dataclass(frozen=True)
class Mutation:
    metric: str
    name: str
    edit: Callable[[Doc], bool]  # changes the metric document in place; False when it does not apply


def _queries(doc: Doc) -> Iterator[tuple[Doc, str]]:
    """Every place a query is declared: the metric itself and its per-class overrides."""
    yield doc, "query"
    for override in (doc.get("by_class") or {}).values():
        yield override, "query"


def _each_query(change: Callable[[str], str]) -> Callable[[Doc], bool]:
    def edit(doc: Doc) -> bool:
        changed = False
        for holder, field in _queries(doc):
            if isinstance(holder.get(field), str):
                new = change(holder[field])
                changed |= new != holder[field]
                holder[field] = new
        return changed

    return edit


def _scale_thresholds(factor: float) -> Callable[[Doc], bool]:
    def edit(doc: Doc) -> bool:
        changed = False
        holders = [doc, *(doc.get("by_class") or {}).values()]
        for holder in holders:
            for level, value in (holder.get("thresholds") or {}).items():
                if isinstance(value, int | float) and value != 0:
                    holder["thresholds"][level] = value * factor
                    changed = True
                elif value == 0 and factor > 1:
                    holder["thresholds"][level] = 1  # x10 of "any" is "more than one"
                    changed = True
        return changed

    return edit


def _flip(query: str) -> str:
    return _COMPARATOR.sub(lambda m: f" {_FLIP[m.group(1)]}{m.group(2)}", query.strip())


def _widen(query: str) -> str:
    def longer(m: re.Match[str]) -> str:
        n = min(int(m.group(2)) * 6, _WINDOW_MAX[m.group(3)])
        return f"{m.group(1)}(last_{n}{m.group(3)})"

    return _HEAD.sub(longer, query.strip())


def _swap(query: str) -> str:
    return _HEAD.sub(lambda m: f"{_SWAP[m.group(1)]}(last_{m.group(2)}{m.group(3)})", query.strip())


def _to_chat(doc: Doc) -> bool:
    """Every severity that pages, in the metric and its per-class overrides, posts to chat instead."""
    changed = False
    for holder in [doc, *(doc.get("by_class") or {}).values()]:
        for severity, audience in (holder.get("notify") or {}).items():
            if audience == "page":
                holder["notify"][severity] = "chat"
                changed = True
    return changed


EDITS: dict[str, Callable[[Doc], bool]] = {
    "threshold x10": _scale_thresholds(10),
    "threshold /10": _scale_thresholds(0.1),
    "threshold x100": _scale_thresholds(100),
    "threshold /100": _scale_thresholds(0.01),
    "paging sent to chat": _to_chat,
    "comparator flipped": _each_query(_flip),
    "window x6": _each_query(_widen),
    "aggregator swapped": _each_query(_swap),
}


def mutations(definitions: Path) -> list[Mutation]:
    """Every mutation of every metric file, in a stable order; removal is one more per metric."""
    found = []
    for path in sorted((definitions / "monitors").glob("*.yaml")):
        metric = path.stem
        found += [Mutation(metric, name, edit) for name, edit in EDITS.items()]
        found.append(Mutation(metric, "monitor removed", lambda doc: True))
    return found


def _obs(definitions: Path, *argv: str) -> int:
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        return obs(["--definitions", str(definitions), *argv])


def _verdict(definitions: Path) -> str:
    if _obs(definitions, "validate") != 0:
        return "refused"  # a validation rule caught the edit before any scenario ran
    return "survived" if _obs(definitions, "test", "--fail-fast") == 0 else "killed"


def _apply(root: Path, mutation: Mutation) -> bool:
    path = root / "monitors" / f"{mutation.metric}.yaml"
    if mutation.name == "monitor removed":
        path.unlink()
        return True
    doc = yaml.safe_load(path.read_text())
    if not mutation.edit(doc):
        return False
    path.write_text(yaml.safe_dump(doc, sort_keys=False, width=10_000))
    return True


def _judge(definitions: Path, index: int) -> dict[str, str] | None:
    """The verdict on mutation `index` of the definitions; None when it does not apply to its metric."""
    mutation = mutations(definitions)[index]
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "definitions"
        shutil.copytree(definitions, root, ignore=shutil.ignore_patterns(".*", "sync", "tests", "bench"))
        if not _apply(root, mutation):
            return None  # the edit does not apply to this metric (no threshold to scale, say)
        return {"metric": mutation.metric, "mutation": mutation.name, "verdict": _verdict(root)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--definitions", type=Path, default=Path(__file__).resolve().parent.parent)
    parser.add_argument("--only", help="mutate this metric only")
    parser.add_argument("--format", choices=("text", "json"), default="text")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="mutants judged at once")
    args = parser.parse_args()

    if _verdict(args.definitions) != "survived":
        print("the unmutated definitions do not pass obs validate and obs test; fix them first", file=sys.stderr)
        return 1

    chosen = [i for i, m in enumerate(mutations(args.definitions)) if not args.only or m.metric == args.only]
    began = time.perf_counter()
    # Mutants share nothing: each is judged in a process of its own, and the results keep the mutations' order.
    with concurrent.futures.ProcessPoolExecutor(args.jobs) as pool:
        judged = pool.map(_judge, [args.definitions] * len(chosen), chosen)
        results = [r for r in judged if r is not None]
    took = time.perf_counter() - began

    caught = sum(r["verdict"] != "survived" for r in results)
    summary = {
        "mutations": len(results),
        "killed by a scenario": sum(r["verdict"] == "killed" for r in results),
        "refused by validation": sum(r["verdict"] == "refused" for r in results),
        "survived": len(results) - caught,
        "kill rate": round(caught / len(results), 3) if results else None,
        "seconds": round(took, 1),
    }
    if args.format == "json":
        print(json.dumps({"summary": summary, "results": results}, indent=2))
    else:
        for r in results:
            print(f"{r['verdict']:9}  {r['metric']:24} {r['mutation']}")
        print(", ".join(f"{k}: {v}" for k, v in summary.items()))
    return 0 if caught == len(results) else 1


if __name__ == "__main__":
    sys.exit(main())
