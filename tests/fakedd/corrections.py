"""SLO corrections as Datadog keeps them (v1 /api/v1/slo/correction): JSON:API envelopes, string ids, epoch
seconds, and the fields the server fills in.

From the published v1 spec: a create names exactly one of `slo_id` or `slo_query` (an unknown SLO is a 404,
"SLO Not Found"); an update's attributes carry no `slo_id` and its envelope no id; a recurring correction's
RRULE takes only FREQ, INTERVAL, COUNT, UNTIL and BYDAY, with a `duration` in seconds; `timezone` defaults
to UTC; answers show `end`, `duration` and `rrule` as null where unset; DELETE answers 204. The list
defaults to 25 per page and reports the total in `meta.page`.
"""

from __future__ import annotations

import copy
import uuid
from collections.abc import Callable
from datetime import datetime
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from datadog_api_client.v1.model.slo_correction_create_request import SLOCorrectionCreateRequest
from datadog_api_client.v1.model.slo_correction_update_request import SLOCorrectionUpdateRequest
from dateutil.rrule import rrulestr

from .common import Body, Query, Rejected, integer, now
from .validate import check

DEFAULT_PAGE = 25  # limit when not given (spec)
CREATOR = {"email": "fake@example.com", "handle": "fake@example.com", "name": None}
_RRULE_PARTS = ("FREQ", "INTERVAL", "COUNT", "UNTIL", "BYDAY")
_UNSET = ("end", "duration", "rrule")


class Corrections:
    def __init__(self, slo_exists: Callable[[str], bool]) -> None:
        self.items: dict[str, Body] = {}  # id -> the stored data object (type, id, attributes)
        self._slo_exists = slo_exists

    def create(self, body: Body) -> Body:
        check(body, SLOCorrectionCreateRequest, read_only=True)
        data = body.get("data") or {}
        _check_type(data)
        attributes = copy.deepcopy(data.get("attributes") or {})
        if ("slo_id" in attributes) == ("slo_query" in attributes):
            raise Rejected(400, "Exactly one of slo_id or slo_query must be provided")  # wording unverified
        if "slo_id" in attributes and not self._slo_exists(attributes["slo_id"]):
            raise Rejected(404, f"SLO {attributes['slo_id']} not found")  # spec: 404 "SLO Not Found"
        _check(attributes)
        moment = int(now().timestamp())
        new_id = str(uuid.uuid4())
        stored = {
            "type": "correction",
            "id": new_id,
            "attributes": {
                **dict.fromkeys(_UNSET),
                "slo_query": None,
                "timezone": "UTC",
                **attributes,
                "created_at": moment,
                "modified_at": moment,
                "creator": dict(CREATOR),
                "modifier": None,
            },
        }
        self.items[new_id] = stored
        return {"data": copy.deepcopy(stored)}

    def update(self, correction_id: str, body: Body) -> Body:
        current = self._get(correction_id)
        check(body, SLOCorrectionUpdateRequest, read_only=True)
        data = body.get("data") or {}
        _check_type(data)
        if "id" in data:
            raise Rejected(400, "data.id: unknown key")  # SLOCorrectionUpdateData has no id
        merged = {**current["attributes"], **copy.deepcopy(data.get("attributes") or {})}
        _check(merged)
        merged["modified_at"] = int(now().timestamp())
        merged["modifier"] = dict(CREATOR)
        current["attributes"] = merged
        return {"data": copy.deepcopy(current)}

    def delete(self, correction_id: str) -> None:
        self._get(correction_id)
        del self.items[correction_id]

    def delete_for_slo(self, slo_id: str) -> None:
        """An SLO's corrections go with it (they name it by ID; the API lists none for a deleted SLO)."""
        for correction_id in [i for i, c in self.items.items() if c["attributes"].get("slo_id") == slo_id]:
            del self.items[correction_id]

    def get(self, correction_id: str) -> Body:
        return {"data": copy.deepcopy(self._get(correction_id))}

    def listing(self, query: Query) -> Body:
        offset = integer(query, "offset") or 0
        limit = integer(query, "limit")
        limit = DEFAULT_PAGE if limit is None else limit
        if limit < 1 or offset < 0:
            raise Rejected(400, "limit must be positive and offset not negative")  # wording unverified
        found = sorted(self.items.values(), key=lambda c: (c["attributes"]["created_at"], c["id"]))
        page = {"total_count": len(found), "total_filtered_count": len(found)}
        return {"data": copy.deepcopy(found[offset : offset + limit]), "meta": {"page": page}}

    def _get(self, correction_id: str) -> Body:
        if correction_id not in self.items:
            raise Rejected(404, "SLO correction not found")  # wording unverified
        return self.items[correction_id]


def _check_type(data: Body) -> None:
    if data.get("type") != "correction":
        raise Rejected(400, "data.type: must be 'correction'")


def _check(attributes: Body) -> None:
    try:
        ZoneInfo(str(attributes.get("timezone") or "UTC"))
    except (ZoneInfoNotFoundError, ValueError):
        raise Rejected(400, f"Invalid timezone: {attributes.get('timezone')}") from None
    rule, start, end = attributes.get("rrule"), int(attributes["start"]), attributes.get("end")  # start: required
    if rule is None:
        if end is None or end <= start:
            raise Rejected(400, "end: a one-time correction ends after it starts")  # wording unverified
        return
    names = [part.split("=", 1)[0] for part in str(rule).split(";") if part]
    unsupported = [n for n in names if n not in _RRULE_PARTS]
    if unsupported or "FREQ" not in names:
        raise Rejected(400, f"rrule: only {', '.join(_RRULE_PARTS)} are supported, not {', '.join(unsupported)}")
    try:
        rrulestr(str(rule), dtstart=datetime.fromtimestamp(start, ZoneInfo("UTC")))
    except (ValueError, TypeError):
        raise Rejected(400, f"rrule: invalid RRULE {rule!r}") from None
    if not isinstance(attributes.get("duration"), int) or attributes["duration"] <= 0:
        raise Rejected(400, "duration: a recurring correction needs a duration in seconds")  # wording unverified
