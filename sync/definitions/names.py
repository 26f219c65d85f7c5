"""Names that must exist: the error for an unknown one, with the closest known name or the list to pick from."""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from typing import TYPE_CHECKING

from sync.definitions.source import KeyPath, Source

if TYPE_CHECKING:
    from sync.definitions.model import Metric


def known_metric(metrics: Mapping[str, Metric], name: str, source: Source, at: KeyPath, what: str) -> Metric:
    known_name(set(metrics), name, source, at, what, "monitors/")
    return metrics[name]


def known_name(known: set[str], name: str, source: Source, at: KeyPath, what: str, where: str) -> None:
    if name not in known:
        raise source.error(at, f"unknown {what} '{name}'", suggest(name, known, where))


def suggest(name: str, known: set[str] | list[str], where: str) -> str:
    """A fix for a misspelt name: the closest known one, else the list when it is short enough to read."""
    close = difflib.get_close_matches(name, list(known), n=1)
    if close:
        return f"did you mean '{close[0]}'?"
    if len(known) <= 12:
        return f"use one declared in {where}: {', '.join(sorted(known))}"
    return f"use one declared in {where}"
