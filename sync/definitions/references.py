"""Checks that span files: names that must exist, template tokens, tags and audiences to notify, in every
layer of settings (a metric's own, a queue's, an environment's, catalogue.yaml's overrides). What each
checks lives by domain: names, templates, composites."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence, Set
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from sync.core.resources import RESERVED_TAG_KEYS
from sync.definitions import composites, names, templates, tokens
from sync.definitions.names import known_name
from sync.definitions.source import KeyPath, Source
from sync.errors import Problems

if TYPE_CHECKING:
    from sync.definitions.model import CatalogueUse, Definitions, Environment, Metric, Queue


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
        for path, text in templates.strings(template.body, ()):
            problems.attempt(templates.check_tokens, template.source, path, text, tokens.DASHBOARD)
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
            self.problems.add(
                source.error(at, f"unknown metric '{name}'", names.suggest(name, set(metrics), "monitors/"))
            )
        return None


def _check_metric(metric: Metric, refs: _Refs) -> None:
    refs.problems.attempt(templates.check_tokens, metric.source, ("title",), metric.title, tokens.MONITOR)
    if metric.composite is not None:
        refs.problems.attempt(composites.check_composite, metric, refs.metrics, refs.failed_metrics)
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
            templates.check_tokens,
            inventory,
            (*at, "publisher_log", "log_group"),
            queue.publisher_log.log_group,
            frozenset({"env"}),
        )


def _check_environment(env: Environment, refs: _Refs) -> None:
    src, problems = env.source, refs.problems
    _check_tags(src, ("tags",), env.tags, problems)
    for kind, pattern in env.naming.items():
        problems.attempt(templates.check_tokens, src, ("naming", kind), pattern, tokens.NAMING)
    if "renotify_audiences" in src.data:  # the default, page, need not be declared: renotify is then off
        for index, audience in enumerate(env.renotify_audiences):
            problems.attempt(
                known_name, set(env.notify), audience, src, ("renotify_audiences", index), "audience", "notify"
            )
    _check_layer(src, ("monitors",), env.monitors, None, refs, env)
    for name, settings in env.metrics.items():
        metric = refs.metric(name, src, ("metrics", name))
        if metric is not None:
            _check_layer(src, ("metrics", name), settings, metric, refs, env)
    queues = {q.name for q in refs.defs.queues} | set(refs.failed_queues)
    for qname, override in env.queues.items():
        problems.attempt(known_name, queues, qname, src, ("queues", qname), "queue", "queues.yaml")
        _check_tags(src, ("queues", qname, "tags"), override.get("tags", ()), problems)
        _check_layer(src, ("queues", qname, "monitors"), override.get("monitors", {}), None, refs, env)
        for name, settings in override.get("metrics", {}).items():
            metric = refs.metric(name, src, ("queues", qname, "metrics", name))
            if metric is not None:
                _check_layer(src, ("queues", qname, "metrics", name), settings, metric, refs, env)
    dashboards = {d.name for d in refs.defs.dashboards} | set(refs.failed_dashboards)
    for name in env.dashboards:
        problems.attempt(known_name, dashboards, name, src, ("dashboards", name), "dashboard", "dashboards/")


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
            problems.attempt(templates.check_tokens, source, (*at, key), settings[key], tokens.MONITOR)
            if metric is not None:
                problems.attempt(templates.check_required, source, (*at, key), settings[key], metric)
    if "query" in settings:
        problems.attempt(templates.check_query, source, (*at, "query"), settings["query"])
    for severity, audience in settings.get("notify", {}).items():
        if audience != "none":
            envs = [env] if env is not None else refs.defs.environments
            problems.attempt(_check_audience, source, (*at, "notify", severity), audience, envs)


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
