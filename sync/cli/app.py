"""The `obs` command line: the parser assembled from one module per command, and the single error boundary."""

from __future__ import annotations

import argparse
import gc
import importlib
import importlib.metadata
import os
import select
import sys
import traceback
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, NoReturn

from sync.cli.colour import CHOICES as COLOR_CHOICES
from sync.cli.conventions import COMMANDS, Exit
from sync.core.redaction import Redactor
from sync.datadog.credentials import API_KEY, APP_KEY
from sync.errors import ObsError

_VALUED = {"--definitions", "--color", "--colour"}  # global options that take a value before the command
DEFINITIONS_ENV = "OBS_DEFINITIONS"


def main(argv: Sequence[str] | None = None) -> int:
    # A fleet's expansion makes hundreds of thousands of small objects that live until obs exits: collecting
    # young objects every 700 allocations (the default) cost a quarter of its time.
    gc.set_threshold(50_000, 20, 20)
    try:
        code = _run(argv)
        sys.stdout.flush()  # what is still buffered is written here, where a reader that left can be told apart
        return code
    except BrokenPipeError as exc:
        if not reader_gone(sys.stdout):  # not our output: some other pipe or socket broke
            debug = "--debug" in (sys.argv if argv is None else argv)
            print(internal_error(exc, debug=debug, environ=os.environ), file=sys.stderr)
            return Exit.ERROR
        # `obs test | head -1`: the reader has what it wanted. Say nothing, as any command cut off by its
        # reader does, and keep the interpreter's last flush from failing again.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return Exit.PIPE_CLOSED


def _run(argv: Sequence[str] | None) -> int:
    given = sys.argv[1:] if argv is None else list(argv)
    args = parser(_command_in(given)).parse_args(given)
    if args.handler is None:  # the command was not the word taken for it: parse again with every command
        args = parser().parse_args(given)
    try:
        return int(args.handler(args))
    except ObsError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return Exit.ERROR
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return Exit.INTERRUPTED
    except BrokenPipeError:
        raise
    except OSError as exc:
        if exc.filename is None:  # not about a path given (a socket's, say): unexpected
            print(internal_error(exc, debug=args.debug, environ=os.environ), file=sys.stderr)
            return Exit.ERROR
        # A path of the user's that cannot be used (a file where a folder goes, no permission, a full disk):
        # whichever command met it, the path and the reason are the message.
        fix = "check the path, and that obs may read and write there"
        print(f"error: {ObsError.of(f'{exc.filename}: {exc.strerror}', fix)}", file=sys.stderr)
        return Exit.ERROR
    except Exception as exc:
        print(internal_error(exc, debug=args.debug, environ=os.environ), file=sys.stderr)
        return Exit.ERROR


def reader_gone(stream: Any) -> bool:
    """Whether `stream` is a pipe whose reading end was closed (poll reports an error on its writing end)."""
    try:
        fd = stream.fileno()
    except (AttributeError, OSError, ValueError):  # replaced by a test harness, or closed
        return False
    if not hasattr(select, "poll"):
        return True  # no poll here: a broken pipe on stdout is by far the likeliest
    poller = select.poll()
    poller.register(fd, select.POLLOUT)
    return any(events & (select.POLLERR | select.POLLHUP) for _, events in poller.poll(0))


def internal_error(exc: BaseException, *, debug: bool, environ: Mapping[str, str]) -> str:
    """What an unexpected error prints: its message, or with --debug its traceback, with any trace of the
    Datadog keys hidden (a library may quote a header value, or a local variable, in its message)."""
    if debug:
        text = "".join(traceback.format_exception(exc)).rstrip("\n")
    else:
        text = f"internal error: {type(exc).__name__}: {exc} (run with --debug for details)"
    secrets = [environ.get(name, "") for name in (API_KEY, APP_KEY)]
    hide = Redactor([s.strip() for s in secrets] + [repr(s)[1:-1] for s in secrets])
    return hide(text)


def version() -> str:
    """The installed package's version: one number, set in pyproject.toml."""
    try:
        return importlib.metadata.version("obs")
    except importlib.metadata.PackageNotFoundError:  # run from a checkout that was never installed
        return "unknown (not installed)"


class _Parser(argparse.ArgumentParser):
    """Usage errors exit 1 like every other error: 2 means "changes pending" to CI."""

    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        self.exit(Exit.ERROR, f"error: {message}\n")


def _command_in(argv: Sequence[str]) -> str:
    """The command a command line runs, read before parsing it: the first word that is not an option or the
    value of a global one. "" when that is no command, or there is none (`obs --help`): then no command is
    loaded, and the table names them all."""
    names = {name for name, _, _ in COMMANDS}
    skip = False
    for word in argv:
        if skip:
            skip = False
        elif word.startswith("-"):
            skip = word in _VALUED
        else:
            return word if word in names else ""
    return ""


def parser(only: str | None = None) -> argparse.ArgumentParser:
    """The whole command line; with `only` (a command's name, or "" for none), the other commands are named
    with their summary but not loaded (running one of them parses again with all)."""
    top = _Parser(
        prog="obs",
        description="Datadog monitors and dashboards for SNS -> SQS -> ECS job queues, as code.",
        epilog=f"Exit codes: {Exit.OK} ok or no changes, {Exit.ERROR} error, {Exit.CHANGES} changes pending "
        f"(with --detailed-exitcode), {Exit.FOUND} failures found (obs trace, obs audit).",
    )
    top.add_argument("--version", action="version", version=f"obs {version()}")
    _global_options(top, default=Path(os.environ.get(DEFINITIONS_ENV) or "."))
    commands = top.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name, module, summary in COMMANDS:
        if only in (None, name):
            importlib.import_module(f"sync.cli.{module}").register(commands)
        else:
            commands.add_parser(name, help=summary).set_defaults(handler=None)
    for sub in _nested(commands):  # every command and subcommand (obs maintenance start), however it was added
        # A subcommand's defaults would overwrite what was given before it, so here there are none:
        # an option given after the command wins, one given before stays, else the default above holds.
        _global_options(sub, default=argparse.SUPPRESS, reads_definitions=sub is not commands.choices["init"])
    return top


def _nested(commands: argparse._SubParsersAction[Any]) -> list[argparse.ArgumentParser]:
    found = []
    for sub in dict.fromkeys(commands.choices.values()):
        found.append(sub)
        for action in sub._actions:
            if isinstance(action, argparse._SubParsersAction):
                found += _nested(action)
    return found


def _global_options(parser: argparse.ArgumentParser, default: object, reads_definitions: bool = True) -> None:
    """`reads_definitions`: False for a command that reads none (obs init writes them), whose help leaves
    --definitions out."""
    parser.add_argument(
        "--definitions",
        type=Path,
        default=default,
        metavar="DIR",
        help=f"the definitions folder (default: ${DEFINITIONS_ENV}, else the current directory)"
        if reads_definitions
        else argparse.SUPPRESS,
    )
    parser.add_argument(
        "--color",
        "--colour",
        choices=COLOR_CHOICES,
        default="auto" if default is not argparse.SUPPRESS else argparse.SUPPRESS,
        help="colour the output of plan, diff, sync and test: auto (the default) colours only on a terminal, "
        "and not when NO_COLOR is set or TERM is dumb",
    )
    parser.add_argument(
        "--debug",
        action="store_true",
        default=False if default is not argparse.SUPPRESS else argparse.SUPPRESS,
        help="show tracebacks of internal errors",
    )
