"""Every environment of a definitions set expanded at once, one forked process each, when the set is big enough
to pay for the processes: environments share nothing and the expansion is pure, so the answer is the one a
single process gives (a fleet of 420 queues: 2.7 s of expansion on one core)."""

from __future__ import annotations

import multiprocessing
import os
import threading
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor

from sync.core.resources import Resource
from sync.definitions.model import Definitions, Environment
from sync.expand import desired

# Queues x metrics x environments below which one process is quicker than starting others (a fork and the
# resources sent back cost about a tenth of a second; the example's 10 queues expand in a twentieth).
WORTH_FORKING = 10_000

_forked: dict[str, Definitions] = {}  # what a forked process expands: inherited from its parent, never sent


def expand_all(defs: Definitions, envs: Sequence[Environment] | None = None) -> dict[str, tuple[Resource, ...]]:
    chosen = tuple(envs or defs.environments)
    if not _worth_forking(defs, chosen):
        return desired.expand_all(defs, chosen)
    _forked["defs"] = defs
    try:
        with ProcessPoolExecutor(len(chosen), mp_context=multiprocessing.get_context("fork")) as pool:
            done = list(pool.map(_expand_named, [env.name for env in chosen]))
    except Exception:  # a problem anywhere: one process reports every environment's problems together
        return desired.expand_all(defs, chosen)
    finally:
        _forked.clear()
    return {env.name: resources for env, resources in zip(chosen, done, strict=True)}


def _worth_forking(defs: Definitions, envs: Sequence[Environment]) -> bool:
    size = len(defs.queues) * len(defs.metrics) * len(envs)
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    # Forking copies one thread: a lock another thread holds would stay held in the child. obs runs one thread;
    # a host that runs more (a test runner) expands in this process.
    forks = "fork" in multiprocessing.get_all_start_methods() and threading.active_count() == 1
    return len(envs) > 1 and cores > 1 and forks and size >= WORTH_FORKING


def _expand_named(name: str) -> tuple[Resource, ...]:
    defs = _forked["defs"]  # set before the processes were forked
    return desired.expand_env(defs, defs.environment(name))
