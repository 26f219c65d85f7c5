"""What every command shares with its callers: the command table, the exit codes and the output formats."""

from __future__ import annotations

import argparse
from collections.abc import Mapping, Sequence
from enum import IntEnum
from typing import TypeAlias

# How the command modules receive the subcommand table from the parser assembly (a string: the class
# is not subscriptable at run time).
Commands: TypeAlias = "argparse._SubParsersAction[argparse.ArgumentParser]"

# Each command, the module below sync.cli that registers and runs it, and its line in `obs --help`, in the order
# `obs --help` lists them. A run imports only its own command's module, and `obs --help` none: the modules load
# AWS's and Datadog's clients and the backtest's engine, which would cost every command a second.
COMMANDS: tuple[tuple[str, str, str], ...] = (
    ("init", "init", "start a definitions folder that uses the catalogue shipped with obs"),
    ("validate", "validate", "check every definition in every environment, offline"),
    ("test", "test_cmd", "evaluate the monitors on the scenarios in scenarios/, offline, the way Datadog does"),
    ("backtest", "backtest", "replay the environment's monitors over real metric history: what would have paged"),
    ("render", "render", "write each resource's exact API request body as JSON"),
    ("plan", "plan", "show what a sync would change in the live org"),
    ("sync", "sync_cmd", "make the live org match the definitions: print the plan, then apply it"),
    ("diff", "diff", "preview what a change of the definitions does in every environment, offline (for pull requests)"),
    ("links", "links", "print where to look for each queue: dashboard, monitors, runbook, AWS consoles"),
    ("schemas", "schemas", "write the JSON Schemas of the definition files, for editors"),
    ("trace", "trace", "name the messages that failed SNS -> SQS delivery, and why"),
    ("audit", "audit", "check the live SNS -> SQS wiring of an environment against the definitions (read-only)"),
    ("maintenance", "maintenance", "start, end and list maintenance windows (Datadog downtimes)"),
)
SUMMARIES = {name: summary for name, _, summary in COMMANDS}


class Exit(IntEnum):
    """The codes CI scripts branch on: each keeps its value for good."""

    OK = 0
    ERROR = 1  # bad input, a failed write, a usage error: never 2, which CI reads as "changes pending"
    CHANGES = 2  # changes pending (plan, diff with --detailed-exitcode)
    FOUND = 3  # obs trace found failed deliveries; obs audit found live wiring at or above --severity
    INTERRUPTED = 130  # 128 + SIGINT, as shells report a Ctrl-C
    PIPE_CLOSED = 141  # 128 + SIGPIPE: the reader of the output left early (obs test | head), as shells report it


FORMATS = ("text", "json", "markdown")


def format_option(
    parser: argparse.ArgumentParser,
    formats: Sequence[str] = FORMATS,
    *,
    also: Mapping[str, str] | None = None,
    help_text: str = "output format (default: text)",
) -> None:
    """--format FORMAT, one of `formats`; `also` maps other accepted names onto one of them."""
    names = dict(also or {})

    def known(text: str) -> str:
        return names.get(text, text)

    parser.add_argument(
        "--format",
        type=known,
        choices=[*formats, *names],
        default="text",
        metavar="{" + ",".join(formats) + "}",
        help=help_text,
    )


def detailed_exitcode_option(parser: argparse.ArgumentParser, when: str) -> None:
    parser.add_argument(
        "--detailed-exitcode", action="store_true", help=f"exit {Exit.CHANGES} when {when} ({Exit.OK} when not)"
    )
