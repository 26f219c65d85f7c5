"""`obs test`: run the scenarios against every environment's monitors, the way Datadog evaluates them."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from sync.cli import colour
from sync.cli.conventions import SUMMARIES, Commands, Exit, format_option
from sync.cli.progress import Progress
from sync.core.backtest.fetched import SOURCES
from sync.core.evaluation.simulate import Result, simulate
from sync.core.resources import Resource
from sync.definitions.load import SCENARIOS, load
from sync.definitions.model import Definitions, Environment
from sync.definitions.scenario import Scenario
from sync.errors import ObsError, Problem
from sync.expand.desired import expand_env
from sync.expand.scenarios import case, environments, heard_by
from sync.report import coverage, evaluation


def register(commands: Commands) -> None:
    parser = commands.add_parser(
        "test",
        help=SUMMARIES["test"],
        description="Runs every scenario (scenarios/*.yaml) against the monitors of each environment it applies "
        "to and checks its expectations: pages in time, no page, recovery, no data. Exit 0 when all pass, "
        "1 when any fails or cannot be evaluated. With --record, writes a scenario from a window of a queue's real "
        "history instead (see docs/scenarios.md, Recording a real incident).",
    )
    parser.add_argument("--env", metavar="ENV", help="only this environment")
    parser.add_argument(
        "--scenario",
        metavar="NAME",
        action="append",
        help="only this scenario (its file name or its name); repeat for more",
    )
    parser.add_argument(
        "--fail-fast",
        action="store_true",
        help="stop at the first scenario run that fails, and report the runs so far",
    )
    format_option(parser, ("text", "json"))
    _record_options(parser)
    parser.add_argument(
        "--verbose",
        action="store_true",
        help="say each modelled assumption in full (the text output names them; the JSON output always has them)",
    )
    parser.set_defaults(handler=run)


def _record_options(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group(
        "recording a scenario (--record)",
        "Reads the real series of one queue's monitors over a window, as `obs backtest` does, and writes them as a "
        "scenario (minute 0: --from; the 6 hours before it as the series' history), with expectations taken from "
        "what the monitors did in the replay. Edit the expectations to what on call needs before committing it.",
    )
    group.add_argument("--record", action="store_true", help="write a scenario from real history (needs --out)")
    group.add_argument("--queue", metavar="Q", help="with --record: the queue whose series are recorded")
    group.add_argument("--from", dest="start", metavar="T", help="with --record: the window's start, ISO 8601 UTC")
    group.add_argument("--to", dest="end", metavar="T", help="with --record: the window's end, ISO 8601 UTC")
    group.add_argument("--out", type=Path, metavar="FILE", help="with --record: the scenario file to write")
    group.add_argument("--force", action="store_true", help="with --record: write over an existing --out file")
    group.add_argument(
        "--source",
        choices=sorted(SOURCES),
        default="cloudwatch",
        help="with --record: where the history is read, as for `obs backtest` (default: cloudwatch)",
    )
    group.add_argument("--no-cache", action="store_true", help="with --record: read everything from the source")


def run(args: argparse.Namespace) -> int:
    if args.record:
        # The backtest's engine and the AWS and Datadog clients: loaded for --record alone, so that a run of the
        # scenarios starts without them.
        from sync.cli import record  # noqa: PLC0415

        return record.run(args)
    given = [
        o for o, v in (("--queue", args.queue), ("--from", args.start), ("--to", args.end), ("--out", args.out)) if v
    ]
    if given:
        raise ObsError.of(f"{given[0]} is an option of --record", "add --record to write a scenario, or leave it out")
    defs = load(args.definitions, scenarios=True)
    scenarios = _chosen(defs, args.scenario)
    only = defs.environment(args.env) if args.env else None  # an unknown name is an error, with the known ones
    runs = [
        (scenario, env)
        for scenario in scenarios
        for env in environments(defs, scenario)
        if only is None or env.name == only.name
    ]
    progress = Progress("obs test", len(runs), sys.stderr)
    try:
        results, skipped = _run(defs, runs, progress, fail_fast=args.fail_fast)
    finally:
        progress.close()
    if not results and skipped:  # every run asked for was skipped: why is the answer, where it is
        fix = "name what the environment has, or list in `environments` where the scenario applies"
        raise ObsError(*(Problem(f"does not apply in {env}: {why}", fix, file) for file, env, why in skipped))
    if not results:
        raise ObsError.of("no scenario applies to the environments chosen", "check --env and the scenarios' queues")
    # What the scenarios show of each monitor is a property of all of them: not said of a chosen few.
    whole = None if args.scenario or len(results) + len(skipped) < len(runs) else coverage.of(results, _classes(defs))
    if args.format == "json":
        print(evaluation.as_json(results, skipped, whole))
    else:
        print(evaluation.text(results, skipped, verbose=args.verbose, colour=colour.enabled(args), coverage=whole))
    return Exit.OK if all(r.passed for _, r in results) else Exit.ERROR


def _run(
    defs: Definitions, runs: Sequence[tuple[Scenario, Environment]], progress: Progress, *, fail_fast: bool = False
) -> tuple[list[tuple[str, Result]], list[tuple[str, str, str]]]:
    """Each scenario in each environment: (file, result) for those that apply, (file, env, why) for the rest."""
    expanded: dict[tuple[str, object], tuple[Definitions, Environment, tuple[Resource, ...]]] = {}
    results: list[tuple[str, Result]] = []
    skipped: list[tuple[str, str, str]] = []
    for done, (scenario, env) in enumerate(runs):
        progress.done(done)
        file = scenario.source.path
        key = (env.name, scenario.audiences)
        if key not in expanded:
            heard, heard_env = heard_by(defs, env, scenario)
            expanded[key] = (heard, heard_env, expand_env(heard, heard_env))
        heard, heard_env, resources = expanded[key]
        placed = case(heard, scenario, heard_env, resources)
        if isinstance(placed, str):
            skipped.append((file, env.name, placed))
        else:
            results.append((file, simulate(placed)))
            if fail_fast and not results[-1][1].passed:
                break
    return results, skipped


def _classes(defs: Definitions) -> dict[str, str]:
    """Each queue's class, by the name its keys carry."""
    return {queue.name: queue.cls for queue in defs.queues}


def _chosen(defs: Definitions, names: Sequence[str] | None) -> tuple[Scenario, ...]:
    """Every scenario, or those of these file names or names, in the definitions' order."""
    if not defs.scenarios:
        raise ObsError.of(f"no scenarios in {SCENARIOS}/", f"add {SCENARIOS}/<name>.yaml (see `obs schemas`)")
    if not names:
        return defs.scenarios
    unknown = [n for n in names if not any(n in (s.file, s.name) for s in defs.scenarios)]
    if unknown:
        known = ", ".join(s.file for s in defs.scenarios)
        raise ObsError.of(f"unknown scenario '{unknown[0]}'", f"use one of: {known}")
    return tuple(s for s in defs.scenarios if s.file in names or s.name in names)
