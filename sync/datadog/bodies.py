"""Pure: a kind's bodies as its endpoints take and give them (`Kind.api`): the JSON:API envelope of v2 kinds,
the `data` an SLO's answers wrap, the fields an update may not send, and how requests are labelled."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sync.core.kinds import Api


def sent(api: Api, body: Mapping[str, Any], object_id: str | None = None) -> Mapping[str, Any]:
    """The request body of a create (no ID) or an update."""
    if object_id is not None and api.create_only:
        body = {k: v for k, v in body.items() if k not in api.create_only}
    if api.envelope is None:
        return body
    identified = {"id": object_id} if object_id and api.update_id else {}
    return {"data": {"type": api.envelope, "attributes": dict(body), **identified}}


def answered(api: Api, answer: Any) -> Any:
    """The object a create's or an update's answer carries, as obs plans with it."""
    if api.envelope and isinstance(answer, Mapping) and isinstance(answer.get("data"), Mapping):
        return attributes(answer["data"])
    if not api.wrapped or not isinstance(answer, Mapping):
        return answer
    data = answer.get("data")  # an SLO create or update answers `{"data": [the SLO]}`
    if isinstance(data, list):
        return data[0] if len(data) == 1 else None
    return data


def attributes(data: Mapping[str, Any]) -> dict[str, Any]:
    """A JSON:API object as obs plans with it: its attributes and its id."""
    return {**(data.get("attributes") or {}), "id": data.get("id")}


def group(api: Api, verb: str) -> str:
    """The rate-limit budget a request draws on: the endpoint's, shared by the kinds it serves (composites
    are monitors), so that pacing by one kind's headers accounts for the other's requests."""
    return f"{api.noun}s {verb}"


def identifier(api: Api, object_id: str) -> int | str:
    return int(object_id) if api.numeric_id else object_id
