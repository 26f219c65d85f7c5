"""Pure: the shape of a classic Datadog metric monitor query, checked before the API sees it.

Form: `time_aggr(time_window):expression comparator number`, with time_aggr one of avg, sum, max, min
(change and pct_change take the change form), and time_window last_#m (1-10080), last_#h (1-168),
last_1d or last_1w. A forecast looks ahead: `max(next_1d):forecast(...) >= number`.

`.as_count()` goes only with the `sum` time aggregator: with it (and arithmetic) Datadog aggregates each
series over the window before the arithmetic, and documents only `sum` for that path; the UI refuses the
rest, the API accepts them and evaluates them in a way nobody can predict.
"""

from __future__ import annotations

from sync.core import metric_query

_WINDOW_LIMITS = {"m": 10080, "h": 168, "d": 1, "w": 1}
_PAIRS = {")": "(", "}": "{", "]": "["}


def problems(query: str) -> list[str]:
    """What is wrong with the query's shape; empty when it looks like one the API parses."""
    found = []
    if "\n" in query:
        found.append("the query spans lines; Datadog rejects newlines in a query (fold it with '>-' in YAML)")
    head = _head(query)
    if not head:
        found.append("it must start with avg|sum|max|min(last_<n><m|h|d|w>): followed by the metric expression")
    elif not head.form:
        count, unit = head.window.count, head.window.unit
        if not 1 <= count <= _WINDOW_LIMITS[unit]:
            found.append(f"last_{count}{unit} is out of range (last_#m 1-10080, last_#h 1-168, last_1d, last_1w)")
    if head and ".as_count()" in query and head.aggregator != "sum":
        found.append(
            f".as_count() under the '{head.aggregator}' time aggregator: Datadog evaluates .as_count() queries "
            "on a path documented only for 'sum'"
        )
    if metric_query.tail(query) is None:
        found.append("it must end with a comparator and a number, e.g. '> 10'")
    if not _balanced(query):
        found.append("its brackets do not balance")
    return found


def _head(query: str) -> metric_query.Head | None:
    """The head, when an expression follows it on the same line (a forecast's inside its `forecast(`)."""
    head = metric_query.head(query)
    if head is None or "\n" in query:
        return None
    opening = len("forecast(") if head.form == "forecast" else 0
    return head if len(query) > head.end + opening else None


def _balanced(text: str) -> bool:
    stack: list[str] = []
    for char in text:
        if char in "({[":
            stack.append(char)
        elif char in _PAIRS and (not stack or stack.pop() != _PAIRS[char]):
            return False
    return not stack
