"""Apply a plan: the writes that make live match desired, concurrently, in an order that lets links resolve.

Dashboards are written before the monitors whose messages link to them, and deleted after them. A failed
change is reported and the rest go on. A create whose answer was lost is looked up by key before it is
tried again, and every write whose answer was lost is checked again at the end (settle.py), so one run
leaves no duplicate and reports as failed only what did not happen. What that check finds (a create whose
answer was lost, committed after all) or rules out (a create that never happened) is acted on in the same
run: the writes that waited for its ID are made again with it, and the create that never happened is tried
again.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from typing import Any

from sync.core import placeholders
from sync.core.kinds import KINDS
from sync.core.outcome import Outcome
from sync.core.plan import Action, Change, Plan
from sync.datadog import listing, settle
from sync.datadog.client import Datadog, RequestFailed

_CREATE_ATTEMPTS = 3
_PASSES = 3  # the first writes, then up to two rounds of what the end-of-run check made possible


def phases(plan: Plan) -> list[list[Change]]:
    """Writes in dependency order, each phase finishing before the next starts: creates and updates of what
    others link to first, deletions of it last."""
    pending = plan.pending
    writes = [[c for c in pending if c.kind == kind and c.action != Action.DELETE] for kind in KINDS]
    deletes = [[c for c in pending if c.kind == kind and c.action == Action.DELETE] for kind in reversed(KINDS)]
    return writes + deletes


def apply(
    plan: Plan,
    dd: Datadog,
    *,
    dry_run: bool = False,
    workers: int = 8,
    done: Callable[[Outcome], None] = lambda outcome: None,
) -> list[Outcome]:
    """Make the changes; a dry run instead puts every monitor to create or update through the API's
    validate endpoint, and writes nothing."""
    if dry_run:
        run: Run = lambda change, ids: _validate(dd, change, ids)  # noqa: E731
        return _run_phases(Plan(plan.env, checked(plan)), workers, done, run, {})[0]
    outcomes = _run_phases(plan, workers, done, lambda change, ids: _write(dd, change, ids), {})[0]
    outcomes = settle.settle(dd, plan.env, outcomes, known(outcomes), settle.grace_for(dd))
    for _ in range(_PASSES - 1):
        ids = known(outcomes)
        again = {id(o.change): _again(o, ids) for o in outcomes}
        redo = [change for change in again.values() if change is not None]
        if not redo:
            break
        redone = _run_phases(Plan(plan.env, tuple(redo)), workers, lambda outcome: None, _writer(dd), ids)[0]
        redone = settle.settle(dd, plan.env, redone, known([*outcomes, *redone]), settle.grace_for(dd))
        by_change = {id(o.change): o for o in redone}
        outcomes = [_merged(o, by_change[id(again[id(o.change)])]) if again[id(o.change)] else o for o in outcomes]
    return outcomes


def _writer(dd: Datadog) -> Run:
    return lambda change, ids: _write(dd, change, ids)


def known(outcomes: Sequence[Outcome]) -> dict[placeholders.Ref, str]:
    """The IDs of the objects written or found in this sync, for the links to them."""
    return {(o.change.kind.name, o.change.key): o.id for o in outcomes if o.id and o.change.action != Action.DELETE}


def _again(outcome: Outcome, ids: Ids) -> Change | None:
    """What to write again now that the end-of-run check knows more: a create it found never happened, or a
    write that waited for an ID the check found (sent again whole, as an update of what was made)."""
    change = outcome.change
    if outcome.doubtful:
        return None  # not checked: trying again could make a second copy
    if outcome.absent:
        return change
    if not outcome.awaited or not outcome.awaited <= set(ids):
        return None
    if outcome.ok and change.action == Action.CREATE and outcome.id:
        return dataclasses.replace(change, action=Action.UPDATE, id=outcome.id, replace=False)
    return None if outcome.ok else change


def _merged(first: Outcome, then: Outcome) -> Outcome:
    """One outcome for a change made in two rounds."""
    named = _named(set(first.awaited))
    if first.ok and then.ok:
        return dataclasses.replace(first, note=f"{first.note}; then completed once {named} had an ID")
    if first.ok:
        return dataclasses.replace(first, error=f"completing it once {named} had an ID failed: {then.error}")
    return dataclasses.replace(then, change=first.change)


def checked(plan: Plan) -> tuple[Change, ...]:
    """What a dry run can check with the API: creates and updates of the kinds it can validate (dashboards
    have no validate endpoint, and deletions nothing to validate), except those whose query names an object
    the sync would create first (a burn-rate monitor of a new SLO): no ID can stand in for it."""
    return tuple(c for c in plan.pending if c.kind.api.validates and c.action != Action.DELETE and not awaits_ids(c))


def awaits_ids(change: Change) -> bool:
    """Whether the change's body refers, outside its message, to an object that has no ID yet."""
    body = change.body or {}
    return bool(placeholders.unresolved({k: v for k, v in body.items() if k != "message"}))


Ids = Mapping[placeholders.Ref, str]
Run = Callable[[Change, Ids], Outcome]


def _run_phases(
    plan: Plan, workers: int, done: Callable[[Outcome], None], run: Run, known: Ids
) -> tuple[list[Outcome], dict[placeholders.Ref, str]]:
    outcomes: list[Outcome] = []
    ids: dict[placeholders.Ref, str] = dict(known)  # objects written in this sync: links to them get their IDs
    pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="obs-sync")
    try:
        for phase in phases(plan):
            for future in as_completed([pool.submit(run, change, dict(ids)) for change in phase]):
                outcome = future.result()
                done(outcome)
                outcomes.append(outcome)
                # A failed replacement still has an object (the old one, or the new one whose predecessor
                # could not be deleted): links to it stay. Only a failed create leaves none.
                if outcome.id and outcome.change.action != Action.DELETE:
                    ids[outcome.change.kind.name, outcome.change.key] = outcome.id
    finally:
        # On Ctrl-C, finish only the writes already in flight; the next sync picks up the rest.
        pool.shutdown(wait=True, cancel_futures=True)
    order = {id(change): index for index, change in enumerate(plan.changes)}
    return sorted(outcomes, key=lambda o: order[id(o.change)]), ids


class _Awaiting(RequestFailed):
    """A body that cannot be sent yet: a query refers to an object that has no ID."""

    def __init__(self, key: str, refs: set[placeholders.Ref]) -> None:
        super().__init__(key, f"it refers to {_named(refs)}, which has no ID yet")
        self.refs = frozenset(refs)


def _body(change: Change, ids: Ids) -> tuple[Mapping[str, Any], str, frozenset[placeholders.Ref]]:
    """The body to send, with the IDs of objects just written; what refers to one whose write failed (a
    message link, a dashboard's widget) is left out, never sent as a placeholder, and put in once the object
    has an ID. A reference elsewhere (a query) cannot be left out: the change fails instead."""
    assert change.body is not None  # every create and update carries its body
    body = placeholders.resolve(change.body, ids, drop_unresolved=True)
    needed = placeholders.unresolved(body)
    if needed:
        raise _Awaiting(change.key, needed)
    missing = placeholders.unresolved(change.body) - set(ids)
    if not missing:
        return body, "", frozenset()
    if placeholders.unresolved({"message": change.body.get("message", "")}):
        return body, f"sent without its link to {_named(missing)}, which has no ID yet", frozenset(missing)
    return body, f"sent without what shows {_named(missing)}, which has no ID yet", frozenset(missing)


def _named(refs: set[placeholders.Ref]) -> str:
    return ", ".join(f"{kind} {key}" for kind, key in sorted(refs))


def _write(dd: Datadog, change: Change, ids: Ids) -> Outcome:
    lost: list[str] = []  # answers lost to a create: it may have committed, even after a lookup missed it
    awaited: frozenset[placeholders.Ref] = frozenset()
    try:
        if change.action == Action.DELETE:
            dd.delete(change.kind, str(change.id))
            return Outcome(change, change.id)
        body, linked, awaited = _body(change, ids)
        if change.action == Action.CREATE:
            new_id, note = _create(dd, change, body, lost)
            return Outcome(change, new_id, note=note or linked, doubtful=bool(lost), awaited=awaited)
        if change.replace:
            new_id, note = _create(dd, change, body, lost, replacing=change.id)
            try:
                dd.delete(change.kind, str(change.id))
            except RequestFailed as exc:
                return Outcome(
                    change,
                    new_id,
                    error=f"created {new_id}, but deleting the old {change.id} failed: {exc}",
                    doubtful=bool(lost),
                )
            return Outcome(change, new_id, note=f"replaced: the new ID is {new_id}", doubtful=bool(lost))
        dd.update(change.kind, str(change.id), body)
        return Outcome(change, change.id, note=linked, awaited=awaited)
    except _Awaiting as exc:
        return Outcome(change, change.id, error=str(exc), awaited=exc.refs)
    except RequestFailed as exc:
        # A create that may have been made keeps what it left out, to put in should the check find it.
        kept = awaited if lost else frozenset()
        return Outcome(change, change.id, error=str(exc), doubtful=bool(lost) or exc.unsure, awaited=kept)


def _create(
    dd: Datadog, change: Change, body: Mapping[str, Any], lost: list[str], replacing: str | None = None
) -> tuple[str, str]:
    """Create, and after an ambiguous failure look the key up before trying again, or giving up: the last
    attempt too may have committed, and composites written next need its ID."""
    for attempt in range(1, _CREATE_ATTEMPTS + 1):
        try:
            return str(dd.create(change.kind, body)["id"]), ""
        except RequestFailed as exc:
            if not exc.ambiguous:
                raise
            lost.append(exc.detail)
            if change.kind.listing.complete:
                raise  # a lookup would read every object of the org: the end-of-run check does it once
            found = _find(dd, change, replacing)
            if found is not None:
                return found, f"the answer to the create was lost ({exc.detail}); found it committed, by key"
            if attempt == _CREATE_ATTEMPTS:
                raise
            dd.backoff(attempt)
    raise AssertionError("unreachable")  # pragma: no cover


def _find(dd: Datadog, change: Change, replacing: str | None) -> str | None:
    found = listing.find(dd, change.kind, change.key)
    # The object being replaced carries the same key: it is not the one we just created.
    ids = sorted((o.created, o.id) for o in found if o.key == change.key and o.id != replacing)
    return ids[0][1] if ids else None


def _validate(dd: Datadog, change: Change, ids: Ids) -> Outcome:
    try:
        existing = None if change.replace else change.id  # a replacement is validated as the new object it is
        errors = dd.validate(change.kind, _body(change, ids)[0], existing)
    except RequestFailed as exc:
        return Outcome(change, change.id, error=str(exc))
    return Outcome(change, change.id, error="; ".join(errors))
