"""The definitions as the commands read them: loaded, expanded and checked like `obs validate` does."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from sync.check import accepted
from sync.core.resources import Resource
from sync.definitions.load import load
from sync.definitions.model import Definitions
from sync.expand.desired import expand


def checked(folder: Path, env: str) -> tuple[Definitions, Sequence[Resource]]:
    """The environment's resources, refused before any call when a body would not pass the API."""
    defs = load(folder)
    desired = expand(defs, env)
    accepted.check(defs, desired)
    return defs, desired


def counted(resources: Sequence[Resource]) -> str:
    monitors = sum(r.kind == "monitor" for r in resources)
    dashboards = len(resources) - monitors
    return f"{monitors} monitor{'s' * (monitors != 1)}, {dashboards} dashboard{'s' * (dashboards != 1)}"
