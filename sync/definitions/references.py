"""Checks that span files: names that must exist, template tokens, and audiences to notify."""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence, Set
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING, Any

from sync.core import composite_query
from sync.core.resources import RESERVED_TAG_KEYS
from sync.definitions import query, tokens
from sync.definitions.source import KeyPath, Source
from sync.errors import Problems

if TYPE_CHECKING:
    from sync.definitions.model import CatalogueUse, Definitions, Environment, Metric, Queue

# The query's threshold is generated from options.thresholds.critical, so both always agree.
QUERY_TAIL = re.compile(r"\s(>=|<=|>|<)\s*\[\[\s*critical\s*\]\]\s*$")


def composite_refs(expression: str) -> list[str]:
    """The metrics a composite expression combines, in order of first mention."""
    return composite_query.names(expression, composite_query.METRIC)


def check(
    defs: Definitions,
    problems: Problems,
    failed_metrics: Set[str] = frozenset(),
    failed_dashboards: Set[str] = frozenset(),
    failed_queues: Set[str] = frozenset(),
) -> None:
    """Every check that spans files, each problem into `problems`. A name whose own definition failed is
    taken as known, and what depends on its content is not checked: its problems are reported once."""
    refs = _Refs(defs, problems, failed_metrics, failed_dashboards, failed_queues)
    for metric in defs.metrics:
        _check_metric(metric, refs)
    index_of = {raw["name"]: i for i, raw in reversed(list(enumerate(defs.inventory.data["queues"])))}
    for queue in defs.queues:
        _check_queue(("queues", index_of[queue.name]), queue, refs)
    for template in defs.dashboards:
        for path, text in _strings(template.body, ()):
            problems.attempt(_check_tokens, template.source, path, text, tokens.DASHBOARD)
    for env in defs.environments:
        _check_environment(env, refs)
    if defs.catalogue is not None:
        _check_catalogue(defs.catalogue, refs)


@dataclass(frozen=True)
class _Refs:
    """The definitions and what the checks across them report to; the failed names they skip."""

    defs: Definitions
    problems: Problems
    failed_metrics: Set[str]
    failed_dashboards: Set[str]
    failed_queues: Set[str]

    @property
    def metrics(self) -> Mapping[str, Metric]:
        return {m.name: m for m in self.defs.metrics}

    def metric(self, name: str, source: Source, at: KeyPath) -> Metric | None:
        """The metric of this name; None (and a problem unless it failed on its own) when there is none."""
        metrics = self.metrics
        if name in metrics:
            return metrics[name]
        if name not in self.failed_metrics:
            self.problems.add(source.error(at, f"unknown metric '{name}'", suggest(name, set(metrics), "monitors/")))
        return None


def _check_metric(metric: Metric, refs: _Refs) -> None:
    refs.problems.attempt(_check_tokens, metric.source, ("title",), metric.title, tokens.MONITOR)
    if metric.composite is not None:
        refs.problems.attempt(_check_composite, metric, refs.metrics, refs.failed_metrics)
    _check_layer(metric.source, (), metric.settings, metric, refs)
    for cls, settings in metric.by_class.items():
        _check_layer(metric.source, ("by_class", cls), settings, metric, refs)


def _check_queue(at: KeyPath, queue: Queue, refs: _Refs) -> None:
    inventory = refs.defs.inventory
    _check_tags(inventory, (*at, "tags"), queue.tags, refs.problems)
    for name, settings in queue.metrics.items():
        metric = refs.metric(name, inventory, (*at, "metrics", name))
        if metric is not None:
            _check_layer(inventory, (*at, "metrics", name), settings, metric, refs)
    if queue.publisher_log:
        refs.problems.attempt(
            _check_tokens,
            inventory,
            (*at, "publisher_log", "log_group"),
            queue.publisher_log.log_group,
            frozenset({"env"}),
        )


def _check_environment(env: Environment, refs: _Refs) -> None:
    src, problems = env.source, refs.problems
    _check_tags(src, ("tags",), env.tags, problems)
    for kind, pattern in env.naming.items():
        problems.attempt(_check_tokens, src, ("naming", kind), pattern, tokens.NAMING)
    if "renotify_audiences" in src.data:  # the default, page, need not be declared: renotify is then off
        for index, audience in enumerate(env.renotify_audiences):
            problems.attempt(
                _known_name, set(env.notify), audience, src, ("renotify_audiences", index), "audience", "notify"
            )
    _check_layer(src, ("monitors",), env.monitors, None, refs, env)
    for name, settings in env.metrics.items():
        metric = refs.metric(name, src, ("metrics", name))
        if metric is not None:
            _check_layer(src, ("metrics", name), settings, metric, refs, env)
    queues = {q.name for q in refs.defs.queues} | set(refs.failed_queues)
    for qname, override in env.queues.items():
        problems.attempt(_known_name, queues, qname, src, ("queues", qname), "queue", "queues.yaml")
        _check_tags(src, ("queues", qname, "tags"), override.get("tags", ()), problems)
        _check_layer(src, ("queues", qname, "monitors"), override.get("monitors", {}), None, refs, env)
        for name, settings in override.get("metrics", {}).items():
            metric = refs.metric(name, src, ("queues", qname, "metrics", name))
            if metric is not None:
                _check_layer(src, ("queues", qname, "metrics", name), settings, metric, refs, env)
    dashboards = {d.name for d in refs.defs.dashboards} | set(refs.failed_dashboards)
    for name in env.dashboards:
        problems.attempt(_known_name, dashboards, name, src, ("dashboards", name), "dashboard", "dashboards/")


def _check_catalogue(use: CatalogueUse, refs: _Refs) -> None:
    """catalogue.yaml's overrides, like any layer of settings (their names were checked against the catalogue)."""
    metrics = refs.metrics
    for name, settings in use.overrides.items():
        if name in metrics:  # else the metric applies to none of the definitions' classes
            _check_layer(use.source, ("overrides", name), settings, metrics[name], refs)
    for name, per_class in use.by_class.items():
        for cls, settings in per_class.items():
            if name in metrics:
                _check_layer(use.source, ("overrides", name, "by_class", cls), settings, metrics[name], refs)


def base_features(metric: Metric) -> frozenset[str]:
    """What a queue needs for this metric at all: its explicit requires plus what its own templates use."""
    needed = set(metric.requires) | _features(metric.settings) | _features({"title": metric.title})
    if metric.for_each != "queue":
        needed.add("topics")
    return frozenset(needed)


def class_features(metric: Metric, cls: str) -> frozenset[str]:
    """What the metric's settings for one class add: a queue of that class must have these."""
    return _features(metric.by_class.get(cls, {})) - base_features(metric)


def _all_features(metric: Metric) -> frozenset[str]:
    return base_features(metric).union(*(_features(s) for s in metric.by_class.values()))


def _features(layer: Mapping[str, Any]) -> frozenset[str]:
    texts = tuple(str(layer.get(key, "")) for key in ("query", "message", "title"))
    return _features_of(texts, layer.get("threshold_basis") == "slo_seconds")


@cache  # asked for every queue and metric; the answer depends on a few templates only
def _features_of(texts: tuple[str, ...], slo: bool) -> frozenset[str]:
    needed = {f for text in texts for t in tokens.tokens_in(text) if (f := tokens.MONITOR.get(t))}
    return frozenset(needed | ({"slo"} if slo else set()))


def _check_layer(
    source: Source,
    at: KeyPath,
    settings: Mapping[str, Any],
    metric: Metric | None,
    refs: _Refs,
    env: Environment | None = None,
) -> None:
    problems = refs.problems
    for key in ("query", "message"):
        if key in settings:
            problems.attempt(_check_tokens, source, (*at, key), settings[key], tokens.MONITOR)
            if metric is not None:
                problems.attempt(_check_required, source, (*at, key), settings[key], metric)
    if "query" in settings:
        problems.attempt(_check_query, source, (*at, "query"), settings["query"])
    for severity, audience in settings.get("notify", {}).items():
        if audience != "none":
            envs = [env] if env is not None else refs.defs.environments
            problems.attempt(_check_audience, source, (*at, "notify", severity), audience, envs)


def _check_required(source: Source, at: KeyPath, text: str, metric: Metric) -> None:
    """A token that needs a queue feature is only for a metric that requires it of its queues."""
    needed = _all_features(metric)
    for name in tokens.tokens_in(text):
        feature = tokens.MONITOR.get(name)  # an unknown token is reported by _check_tokens
        if feature and feature not in needed:
            raise source.error(
                at,
                f"[[{name}]] needs queues with {feature}, but metric '{metric.name}' does not require it",
                f"add '{feature}' to applies_to.requires in monitors/{metric.name}.yaml",
            )


def _check_audience(source: Source, at: KeyPath, audience: str, envs: Sequence[Environment]) -> None:
    lacking = [target for target in envs if audience not in target.notify]
    if not lacking:
        return
    files = " and ".join(f"environments/{target.name}.yaml" for target in lacking)
    common = set.intersection(*(set(target.notify) for target in lacking))
    known = ", ".join(sorted(common)) or "(none declared)"
    raise source.error(
        at,
        f"audience '{audience}' is not declared in {files}",
        f"use 'none', or an audience {'its' if len(lacking) == 1 else 'each'} notify declares: {known}",
    )


def _check_composite(metric: Metric, metrics: Mapping[str, Metric], failed: Set[str]) -> None:
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
    if len(names) > composite_query.MOST_MONITORS:
        raise metric.source.error(
            at, f"it combines {len(names)} metrics; Datadog allows {composite_query.MOST_MONITORS}", "split it in two"
        )
    for name in names:
        if name == metric.name:
            raise metric.source.error(at, f"composite '{name}' refers to itself", "combine other metrics")
        if name in failed:
            continue  # its own file has errors, reported there
        other = _known(metrics, name, metric.source, at, "metric")
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


def _check_tags(source: Source, at: KeyPath, tags: Iterable[str], problems: Problems) -> None:
    for index, tag in enumerate(tags):
        key = tag.split(":", 1)[0]
        if key in RESERVED_TAG_KEYS:
            problems.add(
                source.error(
                    (*at, index),
                    f"tag key '{key}' is set by obs itself",
                    "use another key; obs tags every monitor with "
                    + ", ".join(f"{k}:" for k in sorted(RESERVED_TAG_KEYS)),
                )
            )


def _check_query(source: Source, at: KeyPath, template: str) -> None:
    if not QUERY_TAIL.search(template):
        raise source.error(
            at,
            "the query must end with a comparator and [[critical]], e.g. '... > [[critical]]'",
            "end it so; obs writes the critical threshold there and in options.thresholds.critical",
        )
    # Any name or number stands in for the tokens: the shape is what is checked here.
    sample = tokens.TOKEN.sub("1", template)
    found = query.problems(sample)
    if found:
        raise source.error(at, f"not a Datadog monitor query: {found[0]}", "see the query forms in the README")


def _check_tokens(source: Source, at: KeyPath, text: str, allowed: Mapping[str, Any] | frozenset[str]) -> None:
    unknown = tokens.unknown_tokens(text, allowed)
    if unknown:
        close = difflib.get_close_matches(unknown[0], list(allowed), n=1)
        fix = (
            f"did you mean [[{close[0]}]]?" if close else "use one of " + ", ".join(f"[[{t}]]" for t in sorted(allowed))
        )
        raise source.error(at, f"unknown template token [[{unknown[0]}]]", fix)


def _strings(value: Any, at: KeyPath) -> Iterator[tuple[KeyPath, str]]:
    if isinstance(value, str):
        yield at, value
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _strings(item, (*at, index))
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _strings(item, (*at, key))


def _known(metrics: Mapping[str, Metric], name: str, source: Source, at: KeyPath, what: str) -> Metric:
    _known_name(set(metrics), name, source, at, what, "monitors/")
    return metrics[name]


def _known_name(known: set[str], name: str, source: Source, at: KeyPath, what: str, where: str) -> None:
    if name not in known:
        raise source.error(at, f"unknown {what} '{name}'", suggest(name, known, where))


def suggest(name: str, known: set[str] | list[str], where: str) -> str:
    """A fix for a misspelt name: the closest known one, else the list when it is short enough to read."""
    close = difflib.get_close_matches(name, list(known), n=1)
    if close:
        return f"did you mean '{close[0]}'?"
    if len(known) <= 12:
        return f"use one declared in {where}: {', '.join(sorted(known))}"
    return f"use one declared in {where}"
