"""The `obs trace` command line."""

from __future__ import annotations

import argparse

from ..errors import ObsError


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser("trace", help="name the messages that failed SNS -> SQS delivery")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    raise ObsError.of("obs trace is not built yet")
