"""Monitor settings merged from their layers, remembering which file set each key (for error messages)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from sync.core.evaluation.tasks import TASK_COUNTS
from sync.definitions.model import Definitions, Environment, Metric, Queue
from sync.definitions.overlay import deep_merge
from sync.definitions.source import KeyPath, Source
from sync.errors import ObsError

# Defaults under every metric; evaluation_delay comes from the environment's metrics source, just above.
BUILTIN: Mapping[str, Any] = {
    "enabled": True,
    "priority": 3,
    "notify": {"alert": "none", "warning": "none", "no_data": "none"},
    "notify_no_data": False,
    "no_data_timeframe": 120,
    "renotify_interval": 0,
    "require_full_window": False,
}

# How long after its timestamp an AWS datapoint can be relied on to be in Datadog, by collection path: the
# API crawler polls every 10 minutes and lands 1-minute CloudWatch data 10-12 minutes late (Datadog
# recommends 15 minutes); CloudWatch Metric Streams deliver in 2-3 minutes.
EVALUATION_DELAY = {"crawler": 900, "streams": 300}


@dataclass(frozen=True)
class Layer:
    values: Mapping[str, Any]
    source: Source | None = None
    at: KeyPath = ()
    one_queue: bool = False  # set for one queue, not for every queue of its class


@dataclass(frozen=True)
class Settings:
    values: Mapping[str, Any]
    origin: Mapping[str, Layer]  # top-level key -> the last layer that set it

    def __getitem__(self, name: str) -> Any:
        return self.values[name]

    def get(self, name: str, default: Any = None) -> Any:
        return self.values.get(name, default)

    def error(self, name: str, resource: str, what: str, fix: str) -> ObsError:
        """An error about setting `name` of `resource`, placed at the file and line that last set it."""
        layer = self.origin.get(name)
        if layer is None or layer.source is None:
            return ObsError.of(f"{resource}: {what}", fix)
        return layer.source.error((*layer.at, name), f"{resource}: {what}", fix)


def layers(defs: Definitions, env: Environment, queue: Queue, metric: Metric) -> tuple[Layer, ...]:
    """The layers lowest first; docs/definitions/index.md (Precedence) documents this order."""
    index = defs.queue_index[queue.name]
    env_queue = env.queues.get(queue.name, {})
    src = env.source
    return (
        Layer(BUILTIN),
        Layer({"evaluation_delay": EVALUATION_DELAY[_source(env, metric, queue.cls)]}, src, ("metrics_source",)),
        Layer(metric.settings, metric.source, ()),
        Layer(metric.by_class.get(queue.cls, {}), metric.source, ("by_class", queue.cls)),
        *_catalogue_layers(defs, queue, metric),
        Layer(queue.metrics.get(metric.name, {}), defs.inventory, ("queues", index, "metrics", metric.name), True),
        Layer(env.monitors, src, ("monitors",)),
        Layer(env.metrics.get(metric.name, {}), src, ("metrics", metric.name)),
        Layer(env_queue.get("monitors", {}), src, ("queues", queue.name, "monitors"), True),
        Layer(
            env_queue.get("metrics", {}).get(metric.name, {}), src, ("queues", queue.name, "metrics", metric.name), True
        ),
    )


def _source(env: Environment, metric: Metric, cls: str) -> str:
    """How the metric's data reaches Datadog: the environment's metrics source, except for ECS task counts, which
    come from the ECS API, polled by the AWS integration whatever carries CloudWatch's metrics (Metric Streams
    cannot send them: https://docs.datadoghq.com/integrations/amazon_ecs/): a query reading one waits as long."""
    query = str(metric.by_class.get(cls, {}).get("query") or metric.settings.get("query") or "")
    return "crawler" if any(name in query for name in TASK_COUNTS) else env.metrics_source


def _catalogue_layers(defs: Definitions, queue: Queue, metric: Metric) -> tuple[Layer, ...]:
    """What catalogue.yaml overrides of a metric of the catalogue, for every queue and then for its class."""
    use = defs.catalogue
    if use is None or (metric.name not in use.overrides and metric.name not in use.by_class):
        return ()
    at = ("overrides", metric.name)
    return (
        Layer(use.overrides.get(metric.name, {}), use.source, at),
        Layer(use.by_class.get(metric.name, {}).get(queue.cls, {}), use.source, (*at, "by_class", queue.cls)),
    )


Shared = dict[tuple[str, str, str], Settings]  # (environment, metric, class) -> settings, for one expansion


def settings_for(
    defs: Definitions, env: Environment, queue: Queue, metric: Metric, shared: Shared | None = None
) -> Settings:
    """The merged settings; with `shared`, those of a queue that sets none itself are merged once for
    every queue of its class."""
    at = (env.name, metric.name, queue.cls)
    if shared is not None and at in shared and not _sets_own(env, queue, metric):
        return shared[at]  # checked before building the layers: most queues of a fleet set nothing themselves
    stack = layers(defs, env, queue, metric)
    if shared is None or any(layer.values for layer in stack if layer.one_queue):
        return _merged(stack)
    shared[at] = _merged(stack)
    return shared[at]


def _sets_own(env: Environment, queue: Queue, metric: Metric) -> bool:
    """Whether any layer of this one queue sets something for the metric (the `one_queue` layers)."""
    env_queue = env.queues.get(queue.name, {})
    return bool(
        queue.metrics.get(metric.name) or env_queue.get("monitors") or env_queue.get("metrics", {}).get(metric.name)
    )


def _merged(stack: tuple[Layer, ...]) -> Settings:
    merged: dict[str, Any] = {}
    origin: dict[str, Layer] = {}
    for layer in stack:
        merged = deep_merge(merged, layer.values)
        origin.update((name, layer) for name in layer.values)
    return Settings(merged, origin)
