"""Pure: definitions x environment -> the desired Datadog objects (monitors, dashboards, SLOs, downtimes and
SLO corrections), as API request bodies."""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from sync.core.resources import Resource, sort_key
from sync.definitions import tokens
from sync.definitions.composites import composite_refs
from sync.definitions.model import Definitions, Environment, Metric, Queue
from sync.definitions.slo import SloSettings, slo_settings
from sync.definitions.source import KeyPath, Source
from sync.definitions.templates import base_features, class_features, facts_needed
from sync.errors import ObsError, Problems
from sync.expand import aws_names, maintenance, oncall, slo
from sync.expand.composite import composite
from sync.expand.corrections import corrections
from sync.expand.dashboard import dashboard
from sync.expand.monitor import monitor
from sync.expand.naming import PlacedQueue, PlacedTopic, placed_queues
from sync.expand.settings import Settings, Shared, settings_for


def expand(defs: Definitions, env_name: str) -> tuple[Resource, ...]:
    """`expand_env` of the environment of this name (an unknown name is an error naming the known ones)."""
    return expand_env(defs, defs.environment(env_name))


def expand_env(defs: Definitions, env: Environment) -> tuple[Resource, ...]:
    """Every monitor and dashboard the environment should have, sorted by kind then key."""
    placed = placed_queues(defs, env)
    aws_names.check(defs, env, placed)
    for queue in placed:
        _check_overrides(defs, env, queue.queue)
    feeds: dict[str, list[str]] = {}  # topic -> the queues it feeds here
    for queue in placed:
        for topic in queue.topics:
            feeds.setdefault(topic.sns_name, []).append(queue.sqs_name)
    slos = slo_settings_of(defs, env, placed)
    expansion = _Expansion(defs, env, feeds, oncall.boards(defs, env), slos)
    expansion.held = maintenance.mutings(defs, env, [p.queue for p in placed], expansion.shared)
    missing = left_out(defs, env)
    made = [m for m in defs.metrics if m.name not in missing]
    monitors = [m for q in placed for metric in made for m in expansion.monitors(q, metric)]
    objectives = [
        r for q in placed if q.name in slos for r in slo.resources(env, q, slos[q.name], expansion.links(q, None))
    ]
    dashboards = [dashboard(env, placed, t, slos) for t in defs.dashboards if env.dashboards.get(t.name, True)]
    downtimes = maintenance.downtimes(env, expansion.held, [*monitors, *objectives])
    fixes = corrections(env, expansion.held, objectives)  # planned windows do not spend the SLOs' budgets
    resources = sorted([*monitors, *objectives, *dashboards, *downtimes, *fixes], key=sort_key)
    for before, after in itertools.pairwise(resources):
        if (before.kind, before.key) == (after.kind, after.key):
            raise ObsError.of(f"two {after.kind}s would share the key {after.key}", "give them distinct names")
    return tuple(resources)


def left_out(defs: Definitions, env: Environment) -> dict[str, tuple[str, ...]]:
    """Metric -> the facts it rests on that the environment does not declare: it makes no monitor there."""
    metrics = {m.name: m for m in defs.metrics}
    found = {
        name: tuple(sorted(f for f in facts_needed(m, metrics) if not env.declares(f))) for name, m in metrics.items()
    }
    return {name: missing for name, missing in found.items() if missing}


def undeclared(defs: Definitions) -> list[str]:
    """Notes for the metrics each environment leaves out because it does not declare a fact they rest on."""
    out = []
    for env in defs.environments:
        by_fact: dict[str, list[str]] = {}
        for name, missing in left_out(defs, env).items():
            for fact in missing:
                by_fact.setdefault(fact, []).append(name)
        for fact, names in sorted(by_fact.items()):
            problem = env.source.error(
                ("aws",),
                f"{', '.join(sorted(names))} make no monitors in {env.name}: they rest on aws.{fact}, not declared",
                f"check how Datadog holds the SQS counters and declare aws.{fact} (docs: environments, SQS counters)",
            )
            out.append(problem.problems[0].render())
    return out


def slo_settings_of(defs: Definitions, env: Environment, placed: tuple[PlacedQueue, ...]) -> dict[str, SloSettings]:
    """The SLO settings of each queue that has an SLO here, worked out once per class."""
    by_class: dict[str, SloSettings] = {}
    found = {}
    for q in placed:
        if q.queue.slo_seconds is None:
            continue
        if q.queue.cls not in by_class:
            by_class[q.queue.cls] = slo_settings(defs, env, q.queue.cls)
        if by_class[q.queue.cls].enabled:
            found[q.name] = by_class[q.queue.cls]
    return found


def expand_all(defs: Definitions, envs: Sequence[Environment] | None = None) -> dict[str, tuple[Resource, ...]]:
    """Every environment (or those given) expanded; the problems of all of them raised together (one that a
    shared file causes in each environment once)."""
    problems = Problems()
    out = {env.name: problems.attempt(expand_env, defs, env) for env in (envs or defs.environments)}
    problems.raise_any()
    return {name: resources for name, resources in out.items() if resources is not None}


# The queue attribute behind each feature a metric may need.
_FEATURE_FIELD = {
    "slo": "slo_seconds",
    "worker": "worker",
    "dlq": "dlq",
    "topics": "topics",
    "traffic": "expects_messages_within",
}


Needs = dict[tuple[str, str], tuple[frozenset[str], frozenset[str]]]  # (metric, class) -> features, per expansion


def applies(defs: Definitions, metric: Metric, queue: Queue, needs: Needs | None = None) -> bool:
    """A metric applies to a queue of a listed class that has every feature the metric's templates need.
    What only the class's own settings need is a contract of the class: a queue lacking it is an error.
    With `needs`, what a metric needs is worked out once per class instead of once per queue."""
    if metric.classes is not None and queue.cls not in metric.classes:
        return False
    at = (metric.name, queue.cls)
    found = needs.get(at) if needs is not None else None
    if found is None:
        found = (base_features(metric), class_features(metric, queue.cls))
        if needs is not None:
            needs[at] = found
    base, by_class = found
    if not base <= queue.features:
        return False
    missing = sorted(by_class - queue.features)
    if missing:
        field = _FEATURE_FIELD[missing[0]]
        raise defs.inventory.error(
            ("queues", defs.queue_index[queue.name]),
            f"queue '{queue.name}' has no {field}, which metric '{metric.name}' needs for {queue.cls} queues",
            f"add {field} to the queue, or change its class",
        )
    return True


def _check_overrides(defs: Definitions, env: Environment, queue: Queue) -> None:
    """Settings for a metric that does not apply to the queue would be silently ignored: refuse them."""
    index = defs.queue_index[queue.name]
    places: list[tuple[Source, KeyPath, Mapping[str, Any]]] = [
        (defs.inventory, ("queues", index, "metrics"), queue.metrics),
        (env.source, ("queues", queue.name, "metrics"), env.queues.get(queue.name, {}).get("metrics", {})),
    ]
    metrics = {m.name: m for m in defs.metrics}
    for source, at, overrides in places:
        for name in overrides:
            if not applies(defs, metrics[name], queue):
                raise source.error(
                    (*at, name),
                    f"metric '{name}' does not apply to queue '{queue.name}' ({queue.cls}), so this has no effect",
                    f"remove it, or make monitors/{name}.yaml apply to the queue",
                )


@dataclass
class _Expansion:
    """One environment's expansion, with what its monitors share worked out once."""

    defs: Definitions
    env: Environment
    feeds: Mapping[str, list[str]]  # topic -> the queues it feeds here
    boards: tuple[oncall.Board, ...]
    slos: Mapping[str, SloSettings]  # queue -> the settings of its SLO here, for queues that have one
    shared: Shared = field(default_factory=dict)
    needs: Needs = field(default_factory=dict)
    held: maintenance.Mutings = field(default_factory=dict)  # queue -> the maintenance windows that mute it
    _links: dict[tuple[str, str | None], tuple[str, ...]] = field(default_factory=dict)

    def monitors(self, placed: PlacedQueue, metric: Metric) -> list[Resource]:
        env, queue = self.env, placed.queue
        if not applies(self.defs, metric, queue, self.needs):
            return []
        settings = settings_for(self.defs, env, queue, metric, self.shared)
        if not settings["enabled"]:
            return []
        if settings.get("slo_replaces_page") and placed.name in self.slos:
            settings = _paged_by_slo(settings, self.slos[placed.name])
        base_key = f"{env.name}/{queue.name}/{metric.name}"
        note = maintenance.drain_note(self.held.get(queue.name, ()), metric.name)
        if metric.composite is not None:
            self._check_combined(placed, metric, base_key)
            return [composite(env, placed, metric, settings, base_key, self.links(placed, None), note)]
        if metric.for_each == "queue":
            return [monitor(env, placed, metric, settings, base_key, None, self.links(placed, None), note)]
        topics = placed.topics
        if metric.for_each == "topic":
            # A topic's metric is the topic's: one monitor, kept by the first of the queues it feeds (by name).
            topics = tuple(t for t in topics if min(self.feeds[t.sns_name]) == placed.sqs_name)
        if _uses(settings, "subscription_dlq_name"):
            topics = tuple(t for t in topics if t.subscription_dlq)  # only subscriptions that have a DLQ
        return [
            monitor(
                env,
                placed,
                metric,
                settings,
                f"{base_key}/{t.name}",
                (t, self.feeds[t.sns_name]),
                self.links(placed, t),
                note,
            )
            for t in topics
        ]

    def _check_combined(self, placed: PlacedQueue, metric: Metric, key: str) -> None:
        """A composite needs every monitor it combines: Datadog refuses one that names a missing monitor."""
        queue = placed.queue
        metrics = {m.name: m for m in self.defs.metrics}
        for name in composite_refs(metric.composite or ""):
            other = metrics[name]
            if (
                applies(self.defs, other, queue, self.needs)
                and settings_for(self.defs, self.env, queue, other, self.shared)["enabled"]
            ):
                continue
            raise metric.source.error(
                ("composite",),
                f"{key}: metric '{name}' makes no monitor for queue '{queue.name}' in {self.env.name}",
                f"make '{name}' apply to the queue there, or disable '{metric.name}' for it (enabled: false)",
            )

    def links(self, placed: PlacedQueue, topic: PlacedTopic | None) -> tuple[str, ...]:
        """The same for every monitor of a queue (or of one of its topics)."""
        at = (placed.name, topic.name if topic else None)
        if at not in self._links:
            self._links[at] = oncall.message_lines(self.env, placed, self.boards, topic)
        return self._links[at]


def _paged_by_slo(settings: Settings, slo: SloSettings) -> Settings:
    """What would notify the fast burn's audience (the page) goes to the slow burn's (chat): the burn-rate
    alert pages instead, and only on a real drain of the error budget. Where the fast burn notifies nobody,
    the monitor keeps its page."""
    audiences = {burn.name: burn.audience for burn in slo.burns}
    fast, slow = audiences["fast_burn"], audiences["slow_burn"]
    if fast == "none":
        return settings
    notify = {severity: slow if audience == fast else audience for severity, audience in settings["notify"].items()}
    return Settings({**settings.values, "notify": notify}, settings.origin)


def _uses(settings: Settings, token: str) -> bool:
    return any(token in tokens.tokens_in(settings[field]) for field in ("query", "message"))
