"""Pure: the shape of a classic Datadog metric monitor query, checked before the API sees it.

Form: `time_aggr(time_window):expression comparator number`, with time_aggr one of avg, sum, max, min
(change and pct_change take the change form), and time_window last_#m (1-10080), last_#h (1-168),
last_1d or last_1w. A forecast looks ahead: `max(next_1d):forecast(...) >= number`.

`.as_count()` goes only with the `sum` time aggregator: with it (and arithmetic) Datadog aggregates each
series over the window before the arithmetic, and documents only `sum` for that path; the UI refuses the
rest, the API accepts them and evaluates them in a way nobody can predict.
"""

from __future__ import annotations

import re

_HEAD = re.compile(r"^(avg|sum|max|min)\(last_(\d+)([mhdw])\):(.+)$")
_CHANGE_HEAD = re.compile(
    r"^(change|pct_change)\((avg|sum|max|min)\(last_\d+[mhdw]\),\s*(last_\d+[mhdw]|\d+[mhd]_ago)\):(.+)$"
)
_FORECAST_HEAD = re.compile(r"^(avg|max|min)\(next_(\d+)([mhdw])\):forecast\((.+)$")
_TAIL = re.compile(r"\s(>=|<=|>|<)\s*(-?\d+(\.\d+)?)$")
_WINDOW_LIMITS = {"m": 10080, "h": 168, "d": 1, "w": 1}
_PAIRS = {")": "(", "}": "{", "]": "["}


def problems(query: str) -> list[str]:
    """What is wrong with the query's shape; empty when it looks like one the API parses."""
    found = []
    if "\n" in query:
        found.append("the query spans lines; Datadog rejects newlines in a query (fold it with '>-' in YAML)")
    head = _HEAD.match(query) or _CHANGE_HEAD.match(query) or _FORECAST_HEAD.match(query)
    if not head:
        found.append("it must start with avg|sum|max|min(last_<n><m|h|d|w>): followed by the metric expression")
    elif head.re is _HEAD:
        count, unit = int(head.group(2)), head.group(3)
        if not 1 <= count <= _WINDOW_LIMITS[unit]:
            found.append(f"last_{count}{unit} is out of range (last_#m 1-10080, last_#h 1-168, last_1d, last_1w)")
    if head and ".as_count()" in query:
        aggregator = head.group(2) if head.re is _CHANGE_HEAD else head.group(1)
        if aggregator != "sum":
            found.append(
                f".as_count() under the '{aggregator}' time aggregator: Datadog evaluates .as_count() queries "
                "on a path documented only for 'sum'"
            )
    if not _TAIL.search(query):
        found.append("it must end with a comparator and a number, e.g. '> 10'")
    if not _balanced(query):
        found.append("its brackets do not balance")
    return found


def _balanced(text: str) -> bool:
    stack: list[str] = []
    for char in text:
        if char in "({[":
            stack.append(char)
        elif char in _PAIRS and (not stack or stack.pop() != _PAIRS[char]):
            return False
    return not stack
