"""v2 downtimes as Datadog keeps them: JSON:API envelopes, the fields the server fills in, cancel instead of delete.

From the published v2 spec and a recorded create: ids are UUID strings; `display_timezone` defaults to UTC,
`mute_first_recovery_notification` to false, `notify_end_types` to ["expired"] and `notify_end_states` to all
three states, in an order that differs between answers; a one-time schedule's missing start becomes the
server's time; a recurrence gets a `start` (local, without offset) and the schedule a `current_downtime`;
`status` follows the clock; DELETE cancels, and a canceled downtime stays listed (for about two days).
"""

from __future__ import annotations

import copy
import re
import uuid
from datetime import UTC, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from datadog_api_client.v2.model.downtime_create_request import DowntimeCreateRequest
from datadog_api_client.v2.model.downtime_update_request import DowntimeUpdateRequest
from dateutil.rrule import rrulestr

from .common import Body, Query, Rejected, integer, now, param, timestamp
from .validate import check

NOT_FOUND = "Downtime not found"
DEFAULT_PAGE = 30  # page[limit] when not given (spec)
CREATOR = "3ad549bf-eba0-11e9-a77a-0705486660d0"
_END_STATES = ["warn", "alert", "no data"]
_DURATION = re.compile(r"^[1-9][0-9]*[mhdw]$")
_UNITS = {"m": 1, "h": 60, "d": 1440, "w": 10080}
_NOT_IN_RRULE = ("DTSTART", "DTEND", "DURATION")
_SCOPE_TERM = re.compile(r"^[\w.\-/]+:\S+$")


class Downtimes:
    def __init__(self) -> None:
        self.items: dict[str, Body] = {}  # id -> the stored data object (type, id, attributes, relationships)
        self._reads = 0

    def create(self, body: Body) -> Body:
        check(body, DowntimeCreateRequest, read_only=True)
        data = body["data"]
        _check_type(data)
        attributes = copy.deepcopy(data["attributes"])
        _check(attributes)
        moment = now()
        new_id = str(uuid.uuid1())
        stored: Body = {
            "type": "downtime",
            "id": new_id,
            "attributes": {
                "display_timezone": "UTC",
                "message": None,
                "mute_first_recovery_notification": False,
                "notify_end_types": ["expired"],
                "notify_end_states": list(_END_STATES),
                **attributes,
                "created": timestamp(moment),
                "modified": timestamp(moment),
                "canceled": None,
                "schedule": _schedule(attributes.get("schedule"), moment),
            },
            "relationships": {"monitor": {"data": None}, "created_by": {"data": {"type": "users", "id": CREATOR}}},
        }
        self.items[new_id] = stored
        return self._answer(stored)

    def update(self, downtime_id: str, body: Body) -> Body:
        current = self._get(downtime_id)
        check(body, DowntimeUpdateRequest, read_only=True)
        data = body["data"]
        _check_type(data)
        if data["id"] != downtime_id:
            raise Rejected(400, "data.id does not match the downtime in the path")
        attributes = copy.deepcopy(data["attributes"])
        merged = {**current["attributes"], **attributes}
        _check(merged)
        moment = now()
        if "schedule" in attributes:
            merged["schedule"] = _schedule(attributes["schedule"], moment)
        merged["modified"] = timestamp(moment)
        current["attributes"] = merged
        return self._answer(current)

    def cancel(self, downtime_id: str) -> None:
        current = self._get(downtime_id)
        if current["attributes"]["canceled"] is None:
            current["attributes"]["canceled"] = timestamp(now())

    def get(self, downtime_id: str) -> Body:
        return self._answer(self._get(downtime_id))

    def listing(self, query: Query) -> Body:
        offset = integer(query, "page[offset]") or 0
        limit = integer(query, "page[limit]")
        limit = DEFAULT_PAGE if limit is None else limit
        if limit < 1 or offset < 0:
            raise Rejected(400, "page[limit] must be positive and page[offset] not negative")
        found = [self._shown(d) for d in self.items.values()]
        if param(query, "current_only") == "true":
            found = [d for d in found if d["attributes"]["status"] == "active"]
        return {"data": found[offset : offset + limit], "meta": {"page": {"total_filtered_count": len(found)}}}

    def _get(self, downtime_id: str) -> Body:
        if downtime_id not in self.items:
            raise Rejected(404, NOT_FOUND)
        return self.items[downtime_id]

    def _answer(self, stored: Body) -> Body:
        return {"data": self._shown(stored), "included": []}

    def _shown(self, stored: Body) -> Body:
        """The object as an answer shows it: status from the clock, end states in a changing order."""
        shown = copy.deepcopy(stored)
        attributes = shown["attributes"]
        self._reads += 1
        states = attributes["notify_end_states"]
        if states:
            turn = self._reads % len(states)
            attributes["notify_end_states"] = states[turn:] + states[:turn]
        moment = now()
        schedule = attributes["schedule"]
        if "recurrences" in schedule:
            current = _current(schedule, moment)
            if current is not None:
                schedule["current_downtime"] = {"start": timestamp(current[0]), "end": timestamp(current[1])}
        attributes["status"] = _status(attributes, moment)
        return shown


def _check_type(data: Body) -> None:
    if data.get("type") != "downtime":
        raise Rejected(400, "data.type: must be 'downtime'")


def _check(attributes: Body) -> None:
    scope = str(attributes.get("scope", ""))
    terms = [t for t in re.split(r"\s+(?:AND|OR)\s+|[()]", scope) if t.strip()]
    if not terms or any(t.strip() != "*" and not _SCOPE_TERM.match(t.strip()) for t in terms):
        raise Rejected(400, "All values must have a key")  # recorded for a bad scope
    identifier = attributes.get("monitor_identifier") or {}
    if "monitor_tags" in identifier and not identifier["monitor_tags"]:
        raise Rejected(400, "monitor_identifier.monitor_tags: must not be empty")
    schedule = attributes.get("schedule")
    if isinstance(schedule, dict) and "recurrences" in schedule:
        _zone(schedule.get("timezone") or "UTC")
        recurrences = schedule["recurrences"]
        if not 1 <= len(recurrences) <= 5:
            raise Rejected(400, "schedule.recurrences: between 1 and 5 recurrences")
        for recurrence in recurrences:
            _check_recurrence(recurrence)
    elif isinstance(schedule, dict):
        start, end = _moment(schedule.get("start"), "start"), _moment(schedule.get("end"), "end")
        if start and end and end <= start:
            raise Rejected(400, "schedule.end: must be after start")
    if attributes.get("display_timezone"):
        _zone(attributes["display_timezone"])


def _check_recurrence(recurrence: Body) -> None:
    if not _DURATION.match(str(recurrence.get("duration", ""))):
        raise Rejected(400, "duration: must begin with an integer and end with one of 'm', 'h', 'd', or 'w'")
    rule = str(recurrence.get("rrule", ""))
    if any(f"{part}" in rule.upper() for part in _NOT_IN_RRULE):
        raise Rejected(400, "rrule: DTSTART, DTEND and DURATION are not supported")
    try:
        rrulestr(rule, dtstart=datetime(2000, 1, 1))
    except (ValueError, TypeError):
        raise Rejected(400, f"rrule: invalid RRULE {rule!r}") from None
    if recurrence.get("start"):
        try:
            start = datetime.fromisoformat(recurrence["start"])
        except ValueError:
            raise Rejected(400, "recurrences.start: not an ISO-8601 time") from None
        if start.tzinfo is not None:
            raise Rejected(400, "recurrences.start: must not include a UTC offset")


def _zone(name: str) -> ZoneInfo:
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        raise Rejected(400, f"Invalid timezone: {name}") from None


def _moment(value: Any, name: str) -> datetime | None:
    if value is None:
        return None
    try:
        moment = datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    except ValueError:
        raise Rejected(400, f"schedule.{name}: not an ISO-8601 time") from None
    if moment.utcoffset() != timedelta(0):
        raise Rejected(400, f"schedule.{name}: must include a UTC offset of zero")
    return moment


def _schedule(schedule: Any, moment: datetime) -> Body:
    """The schedule as stored: a one-time start filled in; a recurrence's local start and the current one."""
    if not isinstance(schedule, dict) or "recurrences" not in schedule:
        schedule = schedule or {}
        start = _moment(schedule.get("start"), "start") or moment
        end = _moment(schedule.get("end"), "end")
        return {"start": timestamp(start), "end": timestamp(end) if end else None}
    zone = _zone(schedule.get("timezone") or "UTC")
    local_now = moment.astimezone(zone).replace(tzinfo=None, second=0, microsecond=0)
    recurrences = [
        {**r, "start": r.get("start") or local_now.strftime("%Y-%m-%dT%H:%M")} for r in schedule["recurrences"]
    ]
    return {"recurrences": recurrences, "timezone": schedule.get("timezone") or "UTC"}


def _current(schedule: Body, moment: datetime) -> tuple[datetime, datetime] | None:
    """The ongoing occurrence, else the next one."""
    zone = _zone(schedule["timezone"])
    best: tuple[datetime, datetime] | None = None
    for recurrence in schedule["recurrences"]:
        length = timedelta(minutes=int(recurrence["duration"][:-1]) * _UNITS[recurrence["duration"][-1]])
        start = datetime.fromisoformat(recurrence["start"])
        rule = rrulestr(recurrence["rrule"], dtstart=start)
        local = (moment - length).astimezone(zone).replace(tzinfo=None)
        found = rule.after(local)
        if found is not None:
            begins = found.replace(tzinfo=zone).astimezone(UTC)
            if best is None or begins < best[0]:
                best = (begins, begins + length)
    return best


def _status(attributes: Body, moment: datetime) -> str:
    if attributes["canceled"] is not None:
        return "canceled"
    schedule = attributes["schedule"]
    if "recurrences" in schedule:
        current = schedule.get("current_downtime")
        if current is None:
            return "ended"
        return "active" if datetime.fromisoformat(current["start"]) <= moment else "scheduled"
    start = datetime.fromisoformat(schedule["start"])
    end = datetime.fromisoformat(schedule["end"]) if schedule["end"] else None
    if end is not None and end <= moment:
        return "ended"
    return "active" if start <= moment else "scheduled"
