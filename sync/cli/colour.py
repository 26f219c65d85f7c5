"""Whether a command colours its text: --color, else on a terminal only, and never with NO_COLOR or TERM=dumb."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Mapping
from typing import TextIO

CHOICES = ("auto", "always", "never")


def wanted(choice: str, stream: TextIO, environ: Mapping[str, str]) -> bool:
    """`always` and `never` say so; `auto` colours a terminal, unless NO_COLOR is set to anything
    (https://no-color.org) or the terminal says it cannot (TERM=dumb)."""
    if choice != "auto":
        return choice == "always"
    if environ.get("NO_COLOR") or environ.get("TERM") == "dumb":
        return False
    return stream.isatty()


def enabled(args: argparse.Namespace, stream: TextIO | None = None) -> bool:
    """For a command's output on `stream` (stdout by default)."""
    return wanted(getattr(args, "color", "auto"), stream or sys.stdout, os.environ)
