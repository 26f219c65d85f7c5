"""Types and the clock shared by the monitor and dashboard stores."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

Body = dict[str, Any]
Query = dict[str, list[str]]  # a parsed query string, as urllib.parse.parse_qs gives it


class Rejected(Exception):
    """The answer Datadog gives to a request it refuses: an HTTP status and {"errors": [...]}."""

    def __init__(self, status: int, *errors: str) -> None:
        super().__init__(*errors)
        self.status = status
        self.errors = list(errors)


def now() -> datetime:
    return datetime.now(UTC)


def timestamp(moment: datetime) -> str:
    """Datadog's form: microseconds always, then +00:00 (recorded)."""
    return moment.isoformat(timespec="microseconds")


def param(query: Query, name: str) -> str | None:
    return query[name][-1] if name in query else None


def integer(query: Query, name: str) -> int | None:
    value = param(query, name)
    if value is None:
        return None
    try:
        return int(value)
    except ValueError:
        raise Rejected(400, f"Invalid value for parameter '{name}'") from None  # wording unverified
