"""Apply a plan: the writes that make live match desired, concurrently, in an order that lets links resolve.

Dashboards are written before the monitors whose messages link to them, and deleted after them. A failed
change is reported and the rest go on. A create whose answer was lost is looked up by key before it is
tried again, so a lost response never leaves a duplicate.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass

from . import live
from .datadog import Datadog, RequestFailed
from .plan import CREATE, DELETE, Change, Plan
from .resources import DASHBOARD, KEY_TAG_PREFIX, MONITOR, Resource

_CREATE_ATTEMPTS = 3


@dataclass(frozen=True)
class Outcome:
    change: Change
    id: str | None = None  # the object's ID once the change is made
    error: str = ""
    note: str = ""

    @property
    def ok(self) -> bool:
        return not self.error


def phases(plan: Plan) -> list[list[Change]]:
    """Writes in dependency order: each phase finishes before the next starts."""
    pending = plan.pending
    return [
        [c for c in pending if c.kind == DASHBOARD and c.action != DELETE],
        [c for c in pending if c.kind == MONITOR and c.action != DELETE],
        [c for c in pending if c.kind == MONITOR and c.action == DELETE],
        [c for c in pending if c.kind == DASHBOARD and c.action == DELETE],
    ]


def apply(
    plan: Plan,
    desired: Sequence[Resource],
    dd: Datadog,
    *,
    dry_run: bool = False,
    workers: int = 8,
    done: Callable[[Outcome], None] = lambda outcome: None,
) -> list[Outcome]:
    """Make the changes; a dry run instead puts every monitor to create or update through the API's
    validate endpoint, and writes nothing."""
    resources = {(r.kind, r.key): r for r in desired}
    if dry_run:
        to_check = Plan(plan.env, checked(plan))
        return _run_phases(to_check, workers, done, lambda change: _validate(dd, change, resources))
    return _run_phases(plan, workers, done, lambda change: _write(dd, change, resources))


def checked(plan: Plan) -> tuple[Change, ...]:
    """What a dry run can check with the API: monitors to create or update (dashboards have no validate
    endpoint, and deletions nothing to validate)."""
    return tuple(c for c in plan.pending if c.kind == MONITOR and c.action != DELETE)


def _run_phases(
    plan: Plan, workers: int, done: Callable[[Outcome], None], run: Callable[[Change], Outcome]
) -> list[Outcome]:
    outcomes: list[Outcome] = []
    pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="obs-sync")
    try:
        for phase in phases(plan):
            for future in as_completed([pool.submit(run, change) for change in phase]):
                outcome = future.result()
                done(outcome)
                outcomes.append(outcome)
    finally:
        # On Ctrl-C, finish only the writes already in flight; the next sync picks up the rest.
        pool.shutdown(wait=True, cancel_futures=True)
    order = {id(change): index for index, change in enumerate(plan.changes)}
    return sorted(outcomes, key=lambda o: order[id(o.change)])


def _write(dd: Datadog, change: Change, resources: Mapping[tuple[str, str], Resource]) -> Outcome:
    try:
        if change.action == DELETE:
            dd.delete(change.kind, str(change.id))
            return Outcome(change, change.id)
        resource = resources[change.kind, change.key]
        if change.action == CREATE:
            new_id, note = _create(dd, resource)
            return Outcome(change, new_id, note=note)
        if change.replace:
            new_id, note = _create(dd, resource, replacing=change.id)
            try:
                dd.delete(change.kind, str(change.id))
            except RequestFailed as exc:
                return Outcome(
                    change, new_id, error=f"created {new_id}, but deleting the old {change.id} failed: {exc}"
                )
            return Outcome(change, new_id, note=f"replaced: the new ID is {new_id}")
        dd.update(change.kind, str(change.id), resource.body)
        return Outcome(change, change.id)
    except RequestFailed as exc:
        return Outcome(change, change.id, error=str(exc))


def _create(dd: Datadog, resource: Resource, replacing: str | None = None) -> tuple[str, str]:
    """Create, and after an ambiguous failure look the key up before trying again."""
    for attempt in range(1, _CREATE_ATTEMPTS + 1):
        try:
            return str(dd.create(resource.kind, resource.body)["id"]), ""
        except RequestFailed as exc:
            if not exc.ambiguous or attempt == _CREATE_ATTEMPTS:
                raise
            found = _find(dd, resource, replacing)
            if found is not None:
                return found, f"the answer to the create was lost ({exc.detail}); found it committed, by key"
            dd.backoff(attempt)
    raise AssertionError("unreachable")  # pragma: no cover


def _find(dd: Datadog, resource: Resource, replacing: str | None) -> str | None:
    if resource.kind == MONITOR:
        found = [live.monitor(m) for m in dd.find_monitors(f"{KEY_TAG_PREFIX}{resource.key}")]
    else:
        found = [live.dashboard(s) for s in dd.dashboard_summaries()]
    # The object being replaced carries the same key: it is not the one we just created.
    ids = sorted((o.created, o.id) for o in found if o.key == resource.key and o.id != replacing)
    return ids[0][1] if ids else None


def _validate(dd: Datadog, change: Change, resources: Mapping[tuple[str, str], Resource]) -> Outcome:
    try:
        existing = None if change.replace else change.id  # a replacement is validated as the new monitor it is
        errors = dd.validate_monitor(resources[change.kind, change.key].body, existing)
    except RequestFailed as exc:
        return Outcome(change, change.id, error=str(exc))
    return Outcome(change, change.id, error="; ".join(errors))
