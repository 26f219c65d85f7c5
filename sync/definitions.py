"""Read and validate the definitions folder into frozen dataclasses; everything after this trusts them."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

from . import references, schema, tokens
from .errors import ObsError
from .overlay import Overlay, deep_merge
from .source import Source, read

DEFAULT_RETENTION_SECONDS = 345_600  # SQS default: 4 days
DEFAULT_IN_FLIGHT_QUOTA = 120_000  # per queue, standard and FIFO alike since AWS raised the FIFO limit
DEFAULT_NAMING = "[[env]]-[[name]]"


@dataclass(frozen=True)
class Worker:
    cluster: str
    service: str
    min_tasks: int
    max_tasks: int


@dataclass(frozen=True)
class Dlq:
    name: str
    max_receive_count: int


@dataclass(frozen=True)
class Topic:
    name: str
    subscription_dlq: str | None = None


@dataclass(frozen=True)
class PublisherLog:
    log_group: str
    message_id_field: str
    business_key_field: str | None = None


@dataclass(frozen=True)
class Queue:
    name: str
    cls: str
    runbook: str
    owner: str
    description: str = ""
    slo_seconds: int | None = None
    fifo: bool = False
    retention_seconds: int = DEFAULT_RETENTION_SECONDS
    in_flight_quota: int = DEFAULT_IN_FLIGHT_QUOTA
    worker: Worker | None = None
    dlq: Dlq | None = None
    topics: tuple[Topic, ...] = ()
    publisher_log: PublisherLog | None = None
    tags: tuple[str, ...] = ()
    metrics: Mapping[str, Overlay] = field(default_factory=dict)

    def has(self, feature: str) -> bool:
        """Whether the queue has a feature a metric may require: worker, dlq, topics or slo."""
        return {
            "worker": self.worker is not None,
            "dlq": self.dlq is not None,
            "topics": bool(self.topics),
            "slo": self.slo_seconds is not None,
        }[feature]


@dataclass(frozen=True)
class Metric:
    name: str
    title: str
    for_each: str
    classes: tuple[str, ...] | None
    requires: frozenset[str]
    settings: Overlay
    by_class: Mapping[str, Overlay]
    source: Source = field(repr=False, compare=False)


@dataclass(frozen=True)
class Environment:
    name: str
    account_id: str
    region: str
    site: str
    naming: Mapping[str, str]
    notify: Mapping[str, tuple[str, ...]]
    tags: tuple[str, ...]
    monitors: Overlay
    metrics: Mapping[str, Overlay]
    queues: Mapping[str, Mapping[str, Any]]
    dashboards: Mapping[str, bool]
    source: Source = field(repr=False, compare=False)

    def name_of(self, kind: str, logical: str) -> str:
        pattern = self.naming.get(kind, DEFAULT_NAMING)
        return tokens.fill(pattern, {"env": self.name, "name": logical})


@dataclass(frozen=True)
class DashboardTemplate:
    name: str
    body: Mapping[str, Any]
    source: Source = field(repr=False, compare=False)


@dataclass(frozen=True)
class Definitions:
    root: Path
    classes: Mapping[str, str]
    queues: tuple[Queue, ...]
    metrics: tuple[Metric, ...]
    environments: tuple[Environment, ...]
    dashboards: tuple[DashboardTemplate, ...]
    inventory: Source = field(repr=False, compare=False)
    # Each environment's queues with its overrides applied, in inventory order, without the disabled ones.
    env_queues: Mapping[str, tuple[Queue, ...]] = field(default_factory=dict, repr=False, compare=False)

    @cached_property
    def queue_index(self) -> Mapping[str, int]:
        """Where each queue sits in the inventory (for error messages that point into queues.yaml)."""
        return {queue.name: index for index, queue in enumerate(self.queues)}

    def environment(self, name: str) -> Environment:
        for env in self.environments:
            if env.name == name:
                return env
        known = ", ".join(e.name for e in self.environments)
        raise ObsError.of(f"unknown environment '{name}'", f"use one of: {known}")


INVENTORY = "queues.yaml"


def load(root: Path) -> Definitions:
    """Load every definition file under `root`, validating each against its schema and its references."""
    if not (root / INVENTORY).is_file():
        raise ObsError.of(
            f"no {INVENTORY} in {root}",
            "run obs from your definitions folder, or point to it with --definitions DIR or OBS_DEFINITIONS",
        )
    inventory = _read(root, INVENTORY, "queues")
    classes = {name: spec["description"] for name, spec in inventory.data["classes"].items()}
    queues = _queues(inventory, classes)
    metrics = tuple(_metric(s, classes) for s in _folder(root, "monitors", "metric"))
    dashboards = tuple(DashboardTemplate(s.data["name"], s.data, s) for s in _folder(root, "dashboards", "dashboard"))
    environments = tuple(_environment(s) for s in _folder(root, "environments", "environment"))
    env_queues = {env.name: _queues_in(env, inventory, queues) for env in environments}
    defs = Definitions(root, classes, queues, metrics, environments, dashboards, inventory, env_queues)
    references.check(defs)
    return defs


# Keys of an environment's queue override that are not queue attributes.
_OVERRIDE_ONLY = ("enabled", "monitors", "metrics")


def _queues_in(env: Environment, inventory: Source, queues: tuple[Queue, ...]) -> tuple[Queue, ...]:
    """The inventory as this environment sees it: its queue overrides merged in, disabled queues left out."""
    out = []
    for index, queue in enumerate(queues):
        override = env.queues.get(queue.name, {})
        if override.get("enabled", True) is False:
            continue
        attributes = {k: v for k, v in override.items() if k not in _OVERRIDE_ONLY}
        merged = deep_merge(inventory.data["queues"][index], attributes)
        out.append(queue_from(merged, env.source, ("queues", queue.name)) if attributes else queue)
    return tuple(out)


def _read(root: Path, relative: str, kind: str) -> Source:
    source = read(root / relative, relative)
    if not isinstance(source.data, dict):
        raise ObsError.of("expected a mapping of keys at the top", "see the example definitions", file=relative, line=1)
    schema.check(source, kind)
    return source


def _folder(root: Path, folder: str, kind: str) -> list[Source]:
    files = (
        sorted(p for p in (root / folder).glob("*") if p.suffix in (".yaml", ".yml"))
        if (root / folder).is_dir()
        else []
    )
    if not files:
        raise ObsError.of(f"no {kind} definitions in {folder}/", f"add at least one {folder}/<name>.yaml")
    sources = []
    for path in files:
        relative = f"{folder}/{path.name}"
        twins = [p.name for p in files if p.stem == path.stem and p != path]
        if twins:
            raise ObsError.of(
                f"{kind} '{path.stem}' is defined twice, also in {folder}/{twins[0]}",
                "keep one of the two files",
                file=relative,
            )
        source = _read(root, relative, kind)
        if source.data["name"] != path.stem:
            raise source.error(
                ("name",),
                f"name '{source.data['name']}' differs from the file name",
                f"rename one to '{path.stem}'",
            )
        sources.append(source)
    return sources


def _queues(inventory: Source, classes: Mapping[str, str]) -> tuple[Queue, ...]:
    seen: dict[str, int] = {}
    out = []
    for index, raw in enumerate(inventory.data["queues"]):
        name = raw["name"]
        if name in seen:
            raise inventory.error(
                ("queues", index, "name"),
                f"queue '{name}' is declared twice (first on line {inventory.line_of(('queues', seen[name]))})",
                "give each queue a unique name",
            )
        seen[name] = index
        _check_class(inventory, ("queues", index, "class"), raw["class"], classes)
        out.append(queue_from(raw, inventory, ("queues", index)))
    return tuple(out)


def queue_from(raw: Mapping[str, Any], source: Source, at: tuple[str | int, ...]) -> Queue:
    """Build a Queue from its inventory entry (possibly merged with an environment's override)."""
    worker = raw.get("worker")
    if worker is not None:
        missing = {"cluster", "service", "min_tasks", "max_tasks"} - set(worker)
        if missing:
            raise source.error((*at, "worker"), f"worker lacks {', '.join(sorted(missing))}", "add them")
        if worker["min_tasks"] > worker["max_tasks"]:
            raise source.error(
                (*at, "worker", "min_tasks"),
                f"min_tasks {worker['min_tasks']} is above max_tasks {worker['max_tasks']}",
                "lower min_tasks or raise max_tasks",
            )
    topic_names = [t["name"] for t in raw.get("topics", ())]
    for index, name in enumerate(topic_names):
        if name in topic_names[:index]:
            raise source.error((*at, "topics", index, "name"), f"topic '{name}' is listed twice", "list it once")
    dlq = raw.get("dlq")
    if dlq is not None and {"name", "max_receive_count"} - set(dlq):
        raise source.error((*at, "dlq"), "dlq needs name and max_receive_count", "add them")
    log = raw.get("publisher_log")
    return Queue(
        name=raw["name"],
        cls=raw["class"],
        runbook=raw["runbook"],
        owner=raw["owner"],
        description=raw.get("description", ""),
        slo_seconds=raw.get("slo_seconds"),
        fifo=raw.get("fifo", False),
        retention_seconds=raw.get("retention_seconds", DEFAULT_RETENTION_SECONDS),
        in_flight_quota=raw.get("in_flight_quota", DEFAULT_IN_FLIGHT_QUOTA),
        worker=Worker(**worker) if worker else None,
        dlq=Dlq(**dlq) if dlq else None,
        topics=tuple(Topic(t["name"], t.get("subscription_dlq")) for t in raw.get("topics", ())),
        publisher_log=PublisherLog(log["log_group"], log["message_id_field"], log.get("business_key_field"))
        if log
        else None,
        tags=tuple(raw.get("tags", ())),
        metrics=raw.get("metrics", {}),
    )


def _check_class(source: Source, at: tuple[str | int, ...], cls: str, classes: Mapping[str, str]) -> None:
    if cls not in classes:
        raise source.error(at, f"unknown class '{cls}'", references.suggest(cls, list(classes), "queues.yaml classes"))


_METRIC_KEYS = {"name", "title", "for_each", "applies_to", "by_class", "$schema"}


def _metric(source: Source, classes: Mapping[str, str]) -> Metric:
    data = source.data
    applies = data.get("applies_to", {})
    for index, cls in enumerate(applies.get("classes", ())):
        _check_class(source, ("applies_to", "classes", index), cls, classes)
    classes_listed = applies.get("classes")
    for cls in data.get("by_class", {}):
        _check_class(source, ("by_class", cls), cls, classes)
        if classes_listed and cls not in classes_listed:
            raise source.error(
                ("by_class", cls),
                f"by_class.{cls} is never used: the metric applies only to {', '.join(classes_listed)}",
                f"remove it, or add {cls} to applies_to.classes",
            )
    return Metric(
        name=data["name"],
        title=data["title"],
        for_each=data.get("for_each", "queue"),
        classes=tuple(classes_listed) if classes_listed else None,
        requires=frozenset(applies.get("requires", ())),
        settings={k: v for k, v in data.items() if k not in _METRIC_KEYS},
        by_class=data.get("by_class", {}),
        source=source,
    )


def _environment(source: Source) -> Environment:
    data = source.data
    return Environment(
        name=data["name"],
        account_id=data["aws"]["account_id"],
        region=data["aws"]["region"],
        site=data["datadog"]["site"],
        naming=data.get("naming", {}),
        notify={audience: tuple(handles) for audience, handles in data.get("notify", {}).items()},
        tags=tuple(data.get("tags", ())),
        monitors=data.get("monitors", {}),
        metrics=data.get("metrics", {}),
        queues=data.get("queues", {}),
        dashboards={name: spec.get("enabled", True) for name, spec in data.get("dashboards", {}).items()},
        source=source,
    )
