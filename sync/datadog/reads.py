"""The plan of an environment against the live org, read in as few calls as the kinds' list endpoints allow,
and while the definitions are still being expanded."""

from __future__ import annotations

import functools
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager

from sync.core.kinds import KINDS, Kind
from sync.core.plan import Action, Plan, make_plan
from sync.core.resources import Resource
from sync.datadog import listing
from sync.datadog.client import Datadog


class Ahead:
    """The lists a plan of `env` reads, read in the background from the moment the client exists; how many
    objects each holds is not known until the definitions are expanded, so a list goes page by page until
    `expect` says, then asks for the pages left at once."""

    def __init__(self, dd: Datadog, env: str, *, adopt: bool) -> None:
        self._dd = dd
        self._desired: Sequence[Resource] | None = None
        lists: dict[tuple[str, str | None], Kind] = {}
        for kind in KINDS:  # monitors and composites: one list
            lists.setdefault((kind.api.path, listing.tags(dd, kind, env, adopt=adopt)), kind)
        self._pool = ThreadPoolExecutor(len(lists), thread_name_prefix="obs-read-ahead")
        for (_, tags), kind in lists.items():
            self._pool.submit(listing.objects, dd, kind, tags, expected=functools.partial(self._expected, kind))

    def expect(self, desired: Sequence[Resource]) -> None:
        self._desired = desired

    def _expected(self, kind: Kind) -> int | None:
        return None if self._desired is None else listing.expected(kind, self._desired)

    def close(self, *, cancel: bool) -> None:
        """Done with, once every request under way has its answer. Cancelled, a read sends no request more:
        its next page, or one waiting for the rate limit or to try again, is let go (Datadog.cut_waits)."""
        if not cancel:
            self._pool.shutdown()
            return
        with self._dd.cut_waits():
            self._pool.shutdown(cancel_futures=True)


@contextmanager
def ahead(dd: Datadog, env: str, *, adopt: bool = False) -> Iterator[Ahead]:
    """Within, the lists that `plan` reads are read in the background (see Ahead); their answers are shared
    with `plan` until the block ends, and on a failure in the block they are left unread."""
    with dd.shared_reads():
        reading = Ahead(dd, env, adopt=adopt)
        try:
            yield reading
        except BaseException:
            reading.close(cancel=True)
            raise
        reading.close(cancel=False)


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
