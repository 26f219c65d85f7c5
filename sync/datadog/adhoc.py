"""Ad-hoc downtimes (`obs maintenance start|end`) in the live org: all of a start or none of it.

A create whose answer was lost may have committed: its key is looked up before it is tried again, as a sync
does for monitors, so neither a lost answer nor a second start leaves two downtimes for one metric. A start
that cannot finish cancels what it made, so the queue is never left muted by half.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sync.core.kinds import DOWNTIME, MONITOR
from sync.datadog import listing
from sync.datadog.client import Datadog, RequestFailed

_ATTEMPTS = 3
ALERTING = ("Alert", "Warn")  # states a downtime's end notifies (notify_end_states); No Data where it notifies

KeyOf = Callable[[str], str | None]  # a downtime message -> its ad-hoc key, env/queue/metric


@dataclass
class Started:
    made: dict[str, str] = field(default_factory=dict)  # key -> id, created by this start
    already: dict[str, dict[str, Any]] = field(default_factory=dict)  # key -> the live one that mutes it already
    error: str = ""  # why the start was undone
    left: list[str] = field(default_factory=list)  # keys of this start that could not be undone


def live(dd: Datadog, key_of: KeyOf) -> dict[str, list[dict[str, Any]]]:
    """The live ad-hoc downtimes (one read of the downtime list) by key."""
    found: dict[str, list[dict[str, Any]]] = {}
    for downtime in listing.objects(dd, DOWNTIME):
        key = key_of(str(downtime.get("message") or ""))
        if key is not None:
            found.setdefault(key, []).append(downtime)
    return found


def start(dd: Datadog, bodies: Mapping[str, Mapping[str, Any]], key_of: KeyOf) -> Started:
    """Create each key's downtime unless one is live already; on a failure, cancel what this start made."""
    before = live(dd, key_of)
    done = Started(already={key: before[key][0] for key in bodies if key in before})
    try:
        for key, body in bodies.items():
            if key not in done.already:
                done.made[key] = _create(dd, key, body, key_of, known={d["id"] for d in before.get(key, ())})
    except RequestFailed as exc:
        done.error = str(exc)
        done.left = _undo(dd, set(bodies) - set(done.already), key_of, before)
        done.made = {}
    return done


def _create(dd: Datadog, key: str, body: Mapping[str, Any], key_of: KeyOf, known: set[str]) -> str:
    for attempt in range(1, _ATTEMPTS + 1):
        try:
            return str(dd.create(DOWNTIME, body)["id"])
        except RequestFailed as exc:
            if not exc.ambiguous:
                raise
            found = [d for d in live(dd, key_of).get(key, ()) if d["id"] not in known]
            if found:
                return str(found[0]["id"])
            if attempt == _ATTEMPTS:
                raise
            dd.backoff(attempt)
    raise AssertionError("unreachable")  # pragma: no cover


def _undo(dd: Datadog, keys: set[str], key_of: KeyOf, before: Mapping[str, Sequence[Mapping[str, Any]]]) -> list[str]:
    """Cancel every downtime of these keys that this start made (a lost answer's too); the keys left muted."""
    known = {d["id"] for found in before.values() for d in found}
    left = []
    try:
        made = live(dd, key_of)
    except RequestFailed:
        return sorted(keys)
    for key in sorted(keys):
        for downtime in made.get(key, ()):
            if downtime["id"] in known:
                continue
            try:
                dd.delete(DOWNTIME, str(downtime["id"]))
            except RequestFailed:
                left.append(key)
    return left


def end(dd: Datadog, prefix: str, key_of: KeyOf, until: Callable[[str], datetime | None]) -> tuple[int, bool]:
    """End the live ad-hoc downtimes whose key starts with `prefix`: each expires at `until(key)` (one ending
    sooner anyway is left as it is), or is cancelled at once where that is None. How many, and whether all of
    them notify when they end so (then Datadog notifies the monitors still alerting)."""
    ended, notified = 0, True
    for key, found in live(dd, key_of).items():
        if not key.startswith(prefix):
            continue
        expires = until(key)
        for downtime in found:
            schedule = downtime.get("schedule") or {}
            ends = _moment(schedule.get("end"))
            if expires is None:
                dd.delete(DOWNTIME, str(downtime["id"]))
            elif ends is None or ends > expires:
                start = schedule.get("start") or expires.isoformat()
                dd.update(DOWNTIME, str(downtime["id"]), {"schedule": {"start": start, "end": expires.isoformat()}})
            ended += 1
            way = "canceled" if expires is None else "expired"
            notified = notified and way in (downtime.get("notify_end_types") or ())
    return ended, notified


def _moment(text: object) -> datetime | None:
    try:
        return datetime.fromisoformat(str(text).replace("Z", "+00:00")) if text else None
    except ValueError:
        return None


def alerting(dd: Datadog, tags: str, metrics: Iterable[str]) -> list[tuple[str, str]]:
    """(key, state) of the monitors with these tags, of these metrics, that are in a state a page is for."""
    wanted = {f"metric:{m}" for m in metrics}
    found = []
    for monitor in listing.objects(dd, MONITOR, tags):  # composites too
        monitor_tags = set(monitor.get("tags") or ())
        state = str(monitor.get("overall_state") or "")
        pages = state in ALERTING or (state == "No Data" and (monitor.get("options") or {}).get("notify_no_data"))
        if monitor_tags & wanted and pages:
            key = MONITOR.owner(monitor, dd.ownership)
            if key is None:
                continue  # muted by the tags, but another definitions set's (or nobody's)
            found.append((key, state))
    return sorted(found)
