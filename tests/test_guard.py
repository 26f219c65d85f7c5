"""The safety checks before a sync writes: nothing to sync, and mass deletion."""

from __future__ import annotations

import pytest

from sync.core import guard
from sync.core.kinds import MONITOR
from sync.core.plan import Action, Change, Plan
from sync.core.resources import Resource
from sync.errors import ObsError

DESIRED = [Resource(MONITOR, "prod/q/m", {"name": "m"}, "prod")]


def _plan(unchanged: int, orphans: int, duplicates: int = 0) -> Plan:
    changes = [Change(Action.UNCHANGED, MONITOR, f"prod/keep/{i}", "", "prod") for i in range(unchanged)]
    changes += [Change(Action.DELETE, MONITOR, f"prod/gone/{i}", "", "prod", id=str(i)) for i in range(orphans)]
    changes += [
        Change(Action.DELETE, MONITOR, "prod/keep/0", "", "prod", id=f"d{i}", note="duplicate", duplicate_of="k")
        for i in range(duplicates)
    ]
    return Plan("prod", tuple(changes))


@pytest.mark.parametrize(("managed", "limit"), [(0, 10), (50, 10), (101, 11), (250, 25), (30_000, 25)])
def test_the_delete_limit_is_a_tenth_of_what_obs_manages_between_10_and_25(managed: int, limit: int) -> None:
    assert guard.delete_limit(managed) == limit


def test_deletes_within_the_limit_pass() -> None:
    guard.check(_plan(unchanged=40, orphans=10), DESIRED)


def test_more_deletes_than_the_limit_are_refused_unless_allowed() -> None:
    with pytest.raises(
        ObsError, match=r"refusing to delete 11 of the 51 objects obs manages in 'prod' \(the limit is 10\)"
    ):
        guard.check(_plan(unchanged=40, orphans=11), DESIRED)
    guard.check(_plan(unchanged=40, orphans=11), DESIRED, allow_mass_delete=True)
    guard.check(_plan(unchanged=40, orphans=11), DESIRED, max_deletes=11)
    with pytest.raises(ObsError):
        guard.check(_plan(unchanged=40, orphans=3), DESIRED, max_deletes=2)


def test_duplicate_repairs_do_not_count_as_mass_deletion() -> None:
    guard.check(_plan(unchanged=5, orphans=0, duplicates=40), DESIRED)


def test_definitions_that_expand_to_nothing_are_refused_even_when_deletes_are_allowed() -> None:
    with pytest.raises(ObsError, match="expand to nothing"):
        guard.check(_plan(unchanged=0, orphans=3), [], allow_mass_delete=True)


def test_no_delete_drops_every_deletion() -> None:
    plan = Plan(
        "prod",
        (*_plan(unchanged=1, orphans=2, duplicates=1).changes, Change(Action.CREATE, MONITOR, "prod/n", "", "prod")),
    )
    assert [c.action for c in guard.without_deletes(plan).changes] == [Action.UNCHANGED, Action.CREATE]
