"""The definitions as the commands read them: loaded, expanded and checked like `obs validate` does."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from sync.check import accepted
from sync.core.kinds import KINDS
from sync.core.resources import Resource
from sync.definitions.load import load
from sync.definitions.model import Definitions, Environment
from sync.expand.desired import expand_env


def checked(folder: Path, env_name: str) -> tuple[Definitions, Environment, Sequence[Resource]]:
    """The environment of this name and its resources, refused before any call when a body would not pass the
    API. The one place a command's --env is looked up: what runs below takes the environment itself."""
    defs, env = loaded(folder, env_name)
    return defs, env, resources(defs, env)


def loaded(folder: Path, env_name: str) -> tuple[Definitions, Environment]:
    """The definitions and the environment of this name, not yet expanded (see `checked`)."""
    defs = load(folder)
    return defs, defs.environment(env_name)


def resources(defs: Definitions, env: Environment) -> Sequence[Resource]:
    """The environment's resources, refused when a body would not pass the API."""
    desired = expand_env(defs, env)
    accepted.check(defs, desired)
    return desired


def counted(resources: Sequence[Resource]) -> str:
    """Resources per kind, the kinds others link to last: `49 monitors, 1 dashboard`; a kind the environment
    has none of (downtimes where no maintenance window is declared) is left out."""
    counts = [(kind, sum(r.kind == kind for r in resources)) for kind in reversed(KINDS)]
    return ", ".join(kind.count(n) for kind, n in counts if n) or "nothing"
