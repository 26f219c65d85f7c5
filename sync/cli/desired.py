"""The definitions as the commands read them: loaded, expanded and checked like `obs validate` does."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from sync.check import accepted
from sync.core.kinds import KINDS
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
    """Resources per kind, the kinds others link to last: `49 monitors, 1 dashboard`; SLOs only where there are."""
    counts = [(kind, sum(r.kind == kind for r in resources)) for kind in reversed(KINDS)]
    return ", ".join(kind.count(n) for kind, n in counts if n or kind.name != "slo")
