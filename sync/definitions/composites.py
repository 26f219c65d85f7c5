"""Composite metrics: the metrics an expression combines, and the checks Datadog would otherwise make at sync."""

from __future__ import annotations

from collections.abc import Mapping, Set
from typing import TYPE_CHECKING

from sync.core import composite_query
from sync.definitions.names import known_metric
from sync.definitions.source import KeyPath
from sync.errors import Problems

if TYPE_CHECKING:
    from sync.definitions.model import Metric


def composite_refs(expression: str) -> list[str]:
    """The metrics a composite expression combines, in order of first mention."""
    return composite_query.names(expression, composite_query.METRIC)


def check_composite(metric: Metric, metrics: Mapping[str, Metric], failed: Set[str]) -> None:
    """A composite combines other metrics made once per queue, none of them a composite: every problem at once."""
    at: KeyPath = ("composite",)
    expression = metric.composite or ""
    try:
        names = composite_query.references(composite_query.parse(expression, (composite_query.METRIC,)))
    except composite_query.CompositeError:
        raise metric.source.error(
            at,
            f"not a composite expression: '{expression}'",
            "combine other metrics of the same queue with &&, ||, ! and parentheses, "
            "e.g. '[[metric:a]] && [[metric:b]]'",
        ) from None
    problems = Problems()
    if len(names) > composite_query.MOST_MONITORS:
        problems.add(
            metric.source.error(
                at,
                f"it combines {len(names)} metrics; Datadog allows {composite_query.MOST_MONITORS}",
                "split it in two",
            )
        )
    for name in names:
        if name not in failed:  # else its own file has errors, reported there
            problems.attempt(_check_combined, metric, name, metrics)
    problems.raise_any()


def _check_combined(metric: Metric, name: str, metrics: Mapping[str, Metric]) -> None:
    at: KeyPath = ("composite",)
    if name == metric.name:
        raise metric.source.error(at, f"composite '{name}' refers to itself", "combine other metrics")
    other = known_metric(metrics, name, metric.source, at, "metric")
    if other.composite is not None:
        raise metric.source.error(
            at,
            f"metric '{name}' is itself a composite; Datadog cannot nest composites",
            f"combine the metrics of '{name}' here directly",
        )
    if other.for_each != "queue":
        raise metric.source.error(
            at,
            f"metric '{name}' makes one monitor per {other.for_each}, not one per queue",
            "combine metrics made once per queue",
        )
