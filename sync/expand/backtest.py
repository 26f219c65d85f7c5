"""Pure: what a backtest needs of an environment, placed on the real clock: its monitors (of the queues asked
for), their queues and SLOs, who is paged, and the planned maintenance and SLO corrections of the period."""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from datetime import datetime

from sync.core.backtest.replay import Setup
from sync.core.evaluation import correction
from sync.core.evaluation.audience import Audience
from sync.core.kinds import SLO, SLO_CORRECTION
from sync.core.resources import Resource
from sync.definitions.model import Definitions, Environment
from sync.expand.scenarios import maintenance_mutes


def chosen(resources: Sequence[Resource], queues: Collection[str]) -> tuple[Resource, ...]:
    """The notifying resources, of the queues asked for (all when none are)."""
    return tuple(r for r in resources if r.kind.notifies and (not queues or r.queue in queues))


def setup(
    defs: Definitions,
    env: Environment,
    resources: Sequence[Resource],
    queues: Collection[str],
    origin: datetime,
    duration: int,
    warmup: int,
    unread: Mapping[str, str],
) -> Setup:
    """`origin` is minute 0 (the first fetched), `warmup` the minutes before the period."""
    monitors = chosen(resources, queues)
    fixes = [r.body for r in resources if r.kind == SLO_CORRECTION]
    return Setup(
        monitors={r.key: r.body for r in monitors},
        queues={r.key: r.queue for r in monitors},
        audience=Audience(frozenset(env.notify.get("page", ())), frozenset(env.notify.get("chat", ()))),
        duration=duration,
        slos={r.key: r.body for r in resources if r.kind == SLO},
        mutes=tuple(maintenance_mutes(defs, env, origin, duration)),
        corrections=correction.corrected(fixes, origin, duration),
        warmup=warmup,
        unread=unread,
    )
