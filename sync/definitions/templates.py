"""Templates in metric and dashboard texts: the tokens they may use, what queue features those need, and the
shape of a monitor query."""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterator, Mapping
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from sync.definitions import query, tokens
from sync.definitions.composites import composite_refs
from sync.definitions.source import KeyPath, Source
from sync.errors import Problems

if TYPE_CHECKING:
    from sync.definitions.model import Metric

# The query's threshold is generated from options.thresholds.critical, so both always agree.
QUERY_TAIL = re.compile(r"\s(>=|<=|>|<)\s*\[\[\s*critical\s*\]\]\s*$")


def base_features(metric: Metric) -> frozenset[str]:
    """What a queue needs for this metric at all: its explicit requires plus what its own templates use."""
    needed = set(metric.requires) | _features(metric.settings) | _features({"title": metric.title})
    if metric.for_each != "queue":
        needed.add("topics")
    return frozenset(needed)


def class_features(metric: Metric, cls: str) -> frozenset[str]:
    """What the metric's settings for one class add: a queue of that class must have these."""
    return _features(metric.by_class.get(cls, {})) - base_features(metric)


def all_features(metric: Metric) -> frozenset[str]:
    return base_features(metric).union(*(_features(s) for s in metric.by_class.values()))


def _features(layer: Mapping[str, Any]) -> frozenset[str]:
    found = {f for t in _tokens(_texts(layer)) if (f := tokens.MONITOR.get(t))}
    return frozenset(found | ({"slo"} if layer.get("threshold_basis") == "slo_seconds" else set()))


def facts_needed(metric: Metric, metrics: Mapping[str, Metric]) -> frozenset[str]:
    """The environment facts a metric's monitors rest on (tokens.FACTS): its own templates', and for a composite
    those of every monitor it combines, since it cannot exist without them."""
    layers = [metric.settings, {"title": metric.title}, *metric.by_class.values()]
    own = {f for layer in layers for t in _tokens(_texts(layer)) if (f := tokens.FACTS.get(t))}
    combined = (facts_needed(metrics[name], metrics) for name in composite_refs(metric.composite or ""))
    return frozenset(own).union(*combined)


def _texts(layer: Mapping[str, Any]) -> tuple[str, ...]:
    return tuple(str(layer.get(key, "")) for key in ("query", "message", "title"))


@lru_cache(maxsize=4096)  # asked for every queue, metric and environment; the answer depends on a few templates
def _tokens(texts: tuple[str, ...]) -> frozenset[str]:
    return frozenset(t for text in texts for t in tokens.tokens_in(text))


def check_required(source: Source, at: KeyPath, text: str, metric: Metric) -> None:
    """A token that needs a queue feature is only for a metric that requires it of its queues: every such token."""
    needed = all_features(metric)
    problems = Problems()
    for name in tokens.tokens_in(text):
        feature = tokens.MONITOR.get(name)  # an unknown token is reported by check_tokens
        if feature and feature not in needed:
            problems.add(
                source.error(
                    at,
                    f"[[{name}]] needs queues with {feature}, but metric '{metric.name}' does not require it",
                    f"add '{feature}' to applies_to.requires in monitors/{metric.name}.yaml",
                )
            )
    problems.raise_any()


def check_query(source: Source, at: KeyPath, template: str) -> None:
    if not QUERY_TAIL.search(template):
        raise source.error(
            at,
            "the query must end with a comparator and [[critical]], e.g. '... > [[critical]]'",
            "end it so; obs writes the critical threshold there and in options.thresholds.critical",
        )
    # Any name or number stands in for the tokens: the shape is what is checked here.
    sample = tokens.TOKEN.sub("1", template)
    found = query.problems(sample)
    if found:  # the first: what follows a parse error is seldom worth reading
        raise source.error(at, f"not a Datadog monitor query: {found[0]}", "see the query forms in the README")


def check_tokens(source: Source, at: KeyPath, text: str, allowed: Mapping[str, Any] | frozenset[str]) -> None:
    """Every unknown token of the text, each with its closest known one or the list."""
    problems = Problems()
    for unknown in dict.fromkeys(tokens.unknown_tokens(text, allowed)):
        close = difflib.get_close_matches(unknown, list(allowed), n=1)
        fix = (
            f"did you mean [[{close[0]}]]?" if close else "use one of " + ", ".join(f"[[{t}]]" for t in sorted(allowed))
        )
        problems.add(source.error(at, f"unknown template token [[{unknown}]]", fix))
    problems.raise_any()


def strings(value: Any, at: KeyPath) -> Iterator[tuple[KeyPath, str]]:
    """Every string in a nested body, with where it is."""
    if isinstance(value, str):
        yield at, value
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from strings(item, (*at, index))
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from strings(item, (*at, key))
