"""The end of a sync: writes whose answers were lost are checked against what is live.

A create that timed out may still commit after obs looked its key up and created it again, and a write
reported as failed may have happened. Once every write is done and the late ones had a grace period to
land, the live objects of those keys are read again: duplicates are deleted (the object obs reported is
kept, so links to it hold), a failed write that did happen is reported as done, and one that could not be
checked says so.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Mapping, Sequence

from sync.core import placeholders
from sync.core.diff import diff
from sync.core.kinds import Kind
from sync.core.outcome import Outcome
from sync.core.plan import Action, Live
from sync.datadog import listing
from sync.datadog.client import Datadog, RequestFailed

MAX_GRACE = 10.0  # seconds; a write the server still holds after this is beyond what one run waits for


def grace_for(dd: Datadog) -> float:
    """How long a write may land after its request gave up: about as long again as the request waited."""
    return min(2 * dd.timeout, MAX_GRACE)


Ids = Mapping[placeholders.Ref, str]


def settle(dd: Datadog, env: str, outcomes: Sequence[Outcome], ids: Ids, grace: float) -> list[Outcome]:
    """The outcomes once the doubtful ones are checked against the live org (and duplicates removed)."""
    doubtful = [o for o in outcomes if o.doubtful]
    if not doubtful:
        return list(outcomes)
    time.sleep(grace)
    try:
        live = _live(dd, doubtful)
    except RequestFailed as exc:
        return [_unchecked(o, exc) if o.doubtful else o for o in outcomes]
    by_key: dict[tuple[Kind, str], list[Live]] = {}
    for obj in live:
        if obj.key is not None:
            by_key.setdefault((obj.kind, obj.key), []).append(obj)
    # Checked against the live org: no longer in doubt, whatever the check found.
    return [
        dataclasses.replace(_settled(dd, o, by_key.get((o.change.kind, o.change.key), []), ids, grace), doubtful=False)
        if o.doubtful
        else o
        for o in outcomes
    ]


# Up to this many doubtful objects of a kind are looked up by key, one small answer each; more read every
# object with our marker, a thousand per call (pages that large can outlast a short timeout). A kind whose
# lookup reads every object anyway (downtimes) is read once, whatever the number.
_BY_KEY = 200


def _live(dd: Datadog, doubtful: Sequence[Outcome]) -> list[Live]:
    keys: dict[Kind, set[str]] = {}
    for outcome in doubtful:
        keys.setdefault(outcome.change.kind, set()).add(outcome.change.key)
    found: dict[tuple[Kind, str], Live] = {}  # by ID: lookups of two keys may both return one object
    for kind, wanted in sorted(keys.items(), key=lambda item: item[0].order):
        if kind.listing.wider and (kind.listing.complete or len(wanted) > _BY_KEY):
            objs = listing.wider(dd, kind)
        else:
            objs = [obj for key in sorted(wanted) for obj in listing.find(dd, kind, key)]
        found.update(((obj.kind, obj.id), obj) for obj in objs)
    return list(found.values())


def _unchecked(outcome: Outcome, exc: RequestFailed) -> Outcome:
    if outcome.ok:
        note = f"its answer was lost and checking for a duplicate failed ({exc}); the next sync repairs one"
        return dataclasses.replace(outcome, note="; ".join(filter(None, [outcome.note, note])))
    return dataclasses.replace(
        outcome, error=f"{outcome.error}; uncertain: it may have been made, and checking failed ({exc})"
    )


def _settled(dd: Datadog, outcome: Outcome, twins: list[Live], ids: Ids, grace: float) -> Outcome:
    change = outcome.change
    later = f"{grace:.1f} s later"
    if change.action == Action.DELETE:
        if outcome.ok or any(t.id == change.id for t in twins):
            return dataclasses.replace(outcome, error=f"{outcome.error}; still there {later}" if outcome.error else "")
        return dataclasses.replace(outcome, error="", note="deleted, although its answer was lost")
    if change.action == Action.CREATE or change.replace:
        return _created(dd, outcome, [t for t in twins if not change.replace or t.id != change.id], later)
    if outcome.ok:
        return outcome
    current = next((t for t in twins if t.id == change.id), None)
    assert change.body is not None  # every update carries its body
    sent = placeholders.resolve(change.body, ids, drop_unresolved=True)
    if current is not None and not diff(change.kind, sent, current.body):
        return dataclasses.replace(outcome, error="", note="updated, although its answer was lost")
    return dataclasses.replace(outcome, error=f"{outcome.error}; not applied ({later})")


def _created(dd: Datadog, outcome: Outcome, made: list[Live], later: str) -> Outcome:
    """Exactly one of what a create left behind stays: the one obs reported, else the oldest."""
    if not made:
        if outcome.ok:
            return outcome  # listed too late to see, but the server gave its ID: nothing to repair
        error = f"{outcome.error}; not created: its key is not there {later}"
        return dataclasses.replace(outcome, error=error, absent=not outcome.change.replace)
    made.sort(key=lambda o: (o.created, o.id))
    keep = next((o for o in made if o.id == outcome.id), made[0])
    # A replacement whose new object exists but whose old one could not be deleted stays a failure.
    still = outcome.error if outcome.error.startswith("created ") else ""
    notes = [] if outcome.ok or still else [f"created, although its answer was lost (found {later})"]
    extras = [o for o in made if o is not keep]
    for extra in extras:
        try:
            dd.delete(extra.kind, extra.id)
        except RequestFailed as exc:
            return dataclasses.replace(
                outcome,
                id=keep.id,
                error=f"created {keep.id}, but its duplicate {extra.id} from a lost answer could not be deleted: {exc}",
            )
    if extras:
        notes.append(f"deleted {', '.join(o.id for o in extras)}, a duplicate from a create whose answer was lost")
    return dataclasses.replace(outcome, id=keep.id, error=still, note="; ".join(filter(None, [outcome.note, *notes])))
