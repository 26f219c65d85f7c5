"""The plan of an environment against the live org, read in as few calls as the kinds' list endpoints allow."""

from __future__ import annotations

from collections.abc import Sequence

from sync.core.kinds import KINDS
from sync.core.plan import Action, Plan, make_plan
from sync.core.resources import Resource
from sync.datadog import listing
from sync.datadog.client import Datadog


def plan(dd: Datadog, env: str, desired: Sequence[Resource], *, adopt: bool = False) -> Plan:
    """The plan of `env` against the live org (see sync.datadog.listing for what each kind's read costs).

    Should the plan leave an object to create of a kind whose list can read wider (every object with our
    marker, whatever its environment), that is read before deciding: an object whose env tag was removed by
    hand must be updated, not duplicated. With `adopt`, the first read already took every object it could.
    """
    with dd.shared_reads():  # monitors and composites: one endpoint, read once
        found = {kind: listing.listed(dd, kind, env, desired, adopt=adopt) for kind in KINDS}
        result = make_plan(env, desired, [obj for objs in found.values() for obj in objs], adopt=adopt)
        wider = {
            c.kind
            for c in result.changes
            if c.action == Action.CREATE and c.kind.listing.wider and not c.kind.listing.complete
        }
        if adopt or not wider:
            return result
        for kind in sorted(wider, key=lambda k: k.order):
            found[kind] = listing.wider(dd, kind)
    return make_plan(env, desired, [obj for objs in found.values() for obj in objs])
