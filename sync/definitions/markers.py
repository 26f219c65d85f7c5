"""User text that reaches a Datadog object next to obs's ownership marker must not hold marker text.

obs reads ownership from the last line of a downtime's message or a dashboard's description only, so such
text cannot forge or break it; refusing it as well keeps a pasted marker from confusing a person or a tool
that reads the object.
"""

from __future__ import annotations

from collections.abc import Iterable

from sync.core.resources import forged_marker
from sync.definitions.source import KeyPath, Source
from sync.errors import Problems


def check_user_text(dashboards: Iterable[Source], environments: Iterable[Source], problems: Problems) -> None:
    """Every dashboard or window description that holds marker text, into `problems`."""
    for source in dashboards:
        problems.attempt(_check, source, ("description",), source.data.get("description"))
    for source in environments:
        for index, window in enumerate(source.data.get("maintenance") or ()):
            problems.attempt(_check, source, ("maintenance", index, "description"), window.get("description"))


def _check(source: Source, at: KeyPath, text: object) -> None:
    found = forged_marker(str(text or ""))
    if found is not None:
        raise source.error(
            at,
            f"the text holds '{found}', which obs writes to mark the objects it owns",
            "reword it (for example without the colon)",
        )
