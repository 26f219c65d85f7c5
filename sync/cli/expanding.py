"""Every environment of a definitions set expanded, and its bodies checked against the API's models, at once:
one forked process each, when the set is big enough to pay for the processes. Environments share nothing and
both steps are pure, so the answer is the one a single process gives (a fleet of 420 queues: 2.7 s of expansion
and 1.4 s of checking on one core)."""

from __future__ import annotations

import multiprocessing
import os
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from typing import Any, TypeVar

from sync.check import accepted, models
from sync.core.resources import Resource
from sync.definitions.model import Definitions, Environment
from sync.expand import desired

# Queues x metrics x environments below which one process is quicker than starting others (a fork and the
# resources sent back cost about a tenth of a second; the example's 10 queues expand in a twentieth).
WORTH_FORKING = 10_000

Kept = TypeVar("Kept")
Resources = tuple[Resource, ...]
Rejected = list[tuple[Resource, models.Problem]]

# What a forked process expands, and what it keeps of the result: inherited from its parent, never sent.
_forked: dict[str, Any] = {}


def resources(found: Resources) -> Resources:
    """Keep every resource (a `keep` of `checked`)."""
    return found


def expand_all(defs: Definitions, envs: Sequence[Environment] | None = None) -> dict[str, Resources]:
    """Every environment (or those given) expanded, unchecked."""
    return {name: found for name, (found, _) in _at_once(defs, envs, False, resources).items()}


def checked(
    defs: Definitions, envs: Sequence[Environment] | None, keep: Callable[[Resources], Kept]
) -> dict[str, Kept]:
    """Every environment (or those given) expanded, and every body the API would reject raised as one error:
    what `obs validate` vouches for. Of each environment, what `keep` takes of its resources, worked out in the
    process that expanded it: a forked process sends back that, not ten thousand resources."""
    done = _at_once(defs, envs, True, keep)
    accepted.report(defs, [found for _, rejected in done.values() for found in rejected])
    return {name: kept for name, (kept, _) in done.items()}


def _at_once(
    defs: Definitions, envs: Sequence[Environment] | None, check: bool, keep: Callable[[Resources], Kept]
) -> dict[str, tuple[Kept, Rejected]]:
    chosen = tuple(envs or defs.environments)
    found = _in_processes(defs, chosen, check, keep) if _worth_forking(defs, chosen) else None
    if found is not None:
        return found
    rendered = desired.expand_all(defs, chosen)
    return {name: (keep(made), models.rejected(made) if check else []) for name, made in rendered.items()}


def _in_processes(
    defs: Definitions, chosen: Sequence[Environment], check: bool, keep: Callable[[Resources], Kept]
) -> dict[str, tuple[Kept, Rejected]] | None:
    """None when any process fails: one process then reports every environment's problems together."""
    _forked.update(defs=defs, keep=keep)
    try:
        with ProcessPoolExecutor(len(chosen), mp_context=multiprocessing.get_context("fork")) as pool:
            done = list(pool.map(_expand_named, [env.name for env in chosen], [check] * len(chosen)))
    except Exception:
        return None
    finally:
        _forked.clear()
    return {env.name: found for env, found in zip(chosen, done, strict=True)}


def _worth_forking(defs: Definitions, envs: Sequence[Environment]) -> bool:
    size = len(defs.queues) * len(defs.metrics) * len(envs)
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    # Forking copies one thread: a lock another thread holds would stay held in the child. obs runs one thread;
    # a host that runs more (a test runner) expands in this process.
    forks = "fork" in multiprocessing.get_all_start_methods() and threading.active_count() == 1
    return len(envs) > 1 and cores > 1 and forks and size >= WORTH_FORKING


def _expand_named(name: str, check: bool) -> tuple[Any, Rejected]:
    defs: Definitions = _forked["defs"]  # set before the processes were forked
    made = desired.expand_env(defs, defs.environment(name))
    return _forked["keep"](made), models.rejected(made) if check else []
