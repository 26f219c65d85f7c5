"""`obs validate`: every definition in every environment, checked offline."""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from collections.abc import Sequence
from typing import Any

from sync.cli import expanding
from sync.cli.conventions import SUMMARIES, Commands, Exit, format_option
from sync.cli.desired import counted
from sync.core.resources import Resource
from sync.definitions.load import load
from sync.definitions.maintenance import stale
from sync.errors import ObsError, Problem
from sync.expand.desired import undeclared
from sync.report.vocabulary import many

# The version of the --format json document: a field is only ever added to it, never renamed or removed.
JSON_VERSION = 1


def register(commands: Commands) -> None:
    parser = commands.add_parser(
        "validate",
        help=SUMMARIES["validate"],
        description="Checks every definition in every environment, offline. With --format json, one document on "
        "stdout in either case: {version, ok, errors: [{file, line, key, what, fix}], notes, warnings, queues, "
        "metrics, scenarios, environments: {NAME: {KIND: COUNT}}}; exit 1 when ok is false.",
    )
    format_option(parser, ("text", "json"))
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    if args.format != "json":
        return _text(args)
    try:
        document = _checked(args)
    except ObsError as exc:  # a document for tools, with each problem where it is (CI annotations)
        document = _document(ok=False, errors=exc.problems, notes=exc.notes)
    print(json.dumps(document, indent=2, sort_keys=True))
    return Exit.OK if document["ok"] else Exit.ERROR


def _text(args: argparse.Namespace) -> int:
    try:
        defs = load(args.definitions, scenarios=True)
        made = expanding.checked(defs, None, _made)
    except ObsError as exc:  # every problem, then how many: the size of the work ahead at a glance
        print(f"error: {exc}\n{exc.summary()}", file=sys.stderr)
        return Exit.ERROR
    for warning in stale(defs):
        print(f"warning: {warning}", file=sys.stderr)
    for note in undeclared(defs):
        print(f"note: {note}", file=sys.stderr)
    counts = ", ".join(f"{env}: {said}" for env, (said, _) in made.items())
    scenarios = f"{many(len(defs.scenarios), 'scenario')}, " if defs.scenarios else ""
    print(
        f"ok: {many(len(defs.queues), 'queue')}, {many(len(defs.metrics), 'metric')}, {scenarios}"
        f"{many(len(defs.environments), 'environment')} ({counts})"
    )
    return Exit.OK


def _made(resources: Sequence[Resource]) -> tuple[str, dict[str, int]]:
    """What validate says of an environment: its resources per kind, in words and by the kinds' names."""
    return counted(resources), dict(sorted(Counter(r.kind.name for r in resources).items()))


def _checked(args: argparse.Namespace) -> dict[str, Any]:
    defs = load(args.definitions, scenarios=True)
    made = expanding.checked(defs, None, _made)
    return _document(
        ok=True,
        warnings=[str(w) for w in stale(defs)],
        notes=undeclared(defs),
        queues=len(defs.queues),
        metrics=len(defs.metrics),
        scenarios=len(defs.scenarios),
        environments={env: kinds for env, (_, kinds) in made.items()},
    )


def _document(
    *,
    ok: bool,
    errors: Sequence[Problem] = (),
    notes: Sequence[Problem | str] = (),
    warnings: Sequence[str] = (),
    queues: int | None = None,
    metrics: int | None = None,
    scenarios: int | None = None,
    environments: dict[str, dict[str, int]] | None = None,
) -> dict[str, Any]:
    """Every field always present (the counts null when the definitions did not load), so a tool reads it
    without checking which are there."""
    return {
        "version": JSON_VERSION,
        "ok": ok,
        "errors": [
            {"file": p.file or None, "line": p.line, "key": p.key or None, "what": p.what, "fix": p.fix or None}
            for p in errors
        ],
        "notes": [p if isinstance(p, str) else p.render() for p in notes],
        "warnings": list(warnings),
        "queues": queues,
        "metrics": metrics,
        "scenarios": scenarios,
        "environments": environments,
    }
