"""Read and validate the definitions folder into frozen dataclasses; everything after this trusts them."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace
from datetime import UTC, datetime
from functools import partial
from pathlib import Path
from typing import Any

from sync.definitions import maintenance, markers, references, scenario, schema
from sync.definitions.model import (
    DEFAULT_IN_FLIGHT_QUOTA,
    DEFAULT_RETENTION_SECONDS,
    LIVE,
    DashboardTemplate,
    Definitions,
    Dlq,
    Environment,
    Metric,
    PublisherLog,
    Queue,
    Topic,
    Worker,
)
from sync.definitions.overlay import deep_merge
from sync.definitions.source import Source, read
from sync.errors import ObsError, Problem

INVENTORY = "queues.yaml"
SCENARIOS = "scenarios"


def load(root: Path, now: datetime | None = None) -> Definitions:
    """Load every definition file under `root`, validating each against its schema and its references.
    `now` is the time one-time maintenance windows must start after (the current time unless given)."""
    if not (root / INVENTORY).exists():  # one that exists but is no regular file is refused by the reader
        raise ObsError.of(
            f"no {INVENTORY} in {root}",
            "run obs from your definitions folder, or point to it with --definitions DIR or OBS_DEFINITIONS",
        )
    # Every file is read and checked before any error is raised, so one run reports them all, in order.
    problems: list[Problem] = []
    inventories = _collecting(problems, lambda: [_read(root, INVENTORY, "queues")])
    metric_files = _collecting(problems, lambda: _folder(root, "monitors", "metric"))
    dashboard_files = _collecting(problems, lambda: _folder(root, "dashboards", "dashboard"))
    environment_files = _collecting(problems, lambda: _folder(root, "environments", "environment"))
    scenario_files = _collecting(problems, lambda: _optional_folder(root, SCENARIOS, "scenario"))
    if problems:
        raise ObsError(*sorted(problems, key=lambda p: (p.file, p.line or 0)))
    markers.check_user_text(dashboard_files, environment_files)
    inventory = inventories[0]
    classes = {name: spec["description"] for name, spec in inventory.data["classes"].items()}
    queues = _queues(inventory, classes)
    metrics = tuple(_metric(s, classes) for s in metric_files)
    dashboards = tuple(DashboardTemplate(s.data["name"], s.data, s) for s in dashboard_files)
    moment = now or datetime.now(UTC)
    environments = tuple(_environment(s, moment) for s in environment_files)
    env_queues = {env.name: _queues_in(env, inventory, queues) for env in environments}
    processing = {
        name: spec["max_processing_seconds"]
        for name, spec in inventory.data["classes"].items()
        if "max_processing_seconds" in spec
    }
    slo_classes = {name: spec["slo"] for name, spec in inventory.data["classes"].items() if "slo" in spec}
    defs = Definitions(
        root,
        classes,
        queues,
        metrics,
        environments,
        dashboards,
        inventory,
        env_queues,
        processing,
        slo_classes=slo_classes,
    )
    references.check(defs)
    maintenance.check(defs)
    return replace(defs, scenarios=_scenarios(scenario_files, inventory, defs))


def _scenarios(files: list[Source], inventory: Source, defs: Definitions) -> tuple[scenario.Scenario, ...]:
    raw_queues = {raw["name"]: raw for raw in inventory.data["queues"]}
    metrics = [m.name for m in defs.metrics]
    envs = [e.name for e in defs.environments]
    problems: list[Problem] = []
    out = []
    for source in files:
        stem = source.path.rsplit("/", 1)[-1].rsplit(".", 1)[0]
        try:
            out.append(scenario.scenario(source, stem, raw_queues, metrics, envs))
        except ObsError as exc:
            problems.extend(exc.problems)
    if problems:
        raise ObsError(*problems)
    return tuple(out)


def _optional_folder(root: Path, folder: str, kind: str) -> list[Source]:
    """Like _folder, for a folder the definitions may leave out; its file names need not be `name`s."""
    files = (
        sorted(p for p in (root / folder).glob("*") if p.suffix in (".yaml", ".yml"))
        if (root / folder).is_dir()
        else []
    )
    problems: list[Problem] = []
    sources = []
    for path in files:
        relative = f"{folder}/{path.name}"
        twins = [p.name for p in files if p.stem == path.stem and p != path]
        if twins:
            what = f"{kind} '{path.stem}' is defined twice, also in {folder}/{twins[0]}"
            problems.append(Problem(what, "keep one of the two files", file=relative))
            continue
        sources += _collecting(problems, partial(_one, root, relative, kind))
    if problems:
        raise ObsError(*problems)
    return sources


def _one(root: Path, relative: str, kind: str) -> list[Source]:
    return [_read(root, relative, kind)]


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
    problems: list[Problem] = []
    sources = []
    for path in files:
        sources += _collecting(problems, partial(_each, root, folder, kind, path, files))
    if problems:
        raise ObsError(*problems)
    return sources


def _each(root: Path, folder: str, kind: str, path: Path, files: list[Path]) -> list[Source]:
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
    return [source]


def _collecting(problems: list[Problem], read: Callable[[], list[Source]]) -> list[Source]:
    """What `read` returns; its problems go to `problems` instead of stopping the load."""
    try:
        return read()
    except ObsError as exc:
        problems.extend(exc.problems)
        return []


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
    retention = raw.get("retention_seconds", DEFAULT_RETENTION_SECONDS)
    if dlq is not None and not raw.get("fifo") and dlq.get("retention_seconds", DEFAULT_RETENTION_SECONDS) < retention:
        # Standard queues keep a message's original enqueue time when it moves to the DLQ (FIFO resets it).
        raise source.error(
            (*at, "dlq", "retention_seconds") if "retention_seconds" in dlq else (*at, "dlq"),
            f"the DLQ keeps messages {dlq.get('retention_seconds', DEFAULT_RETENTION_SECONDS)} s, less than the "
            f"queue's {retention} s: a parked message expires counting from when it was first sent, so it "
            "could vanish before anyone sees it",
            f"set dlq.retention_seconds to at least {retention} (1209600, 14 days, is the most SQS allows)",
        )
    log = raw.get("publisher_log")
    return Queue(
        name=raw["name"],
        cls=raw["class"],
        runbook=raw["runbook"],
        owner=raw["owner"],
        description=raw.get("description", ""),
        slo_seconds=raw.get("slo_seconds"),
        fifo=raw.get("fifo", False),
        content_based_deduplication=raw.get("content_based_deduplication"),
        retention_seconds=raw.get("retention_seconds", DEFAULT_RETENTION_SECONDS),
        max_processing_seconds=raw.get("max_processing_seconds"),
        in_flight_quota=raw.get("in_flight_quota", DEFAULT_IN_FLIGHT_QUOTA),
        worker=Worker(**worker) if worker else None,
        dlq=Dlq(**dlq) if dlq else None,
        topics=tuple(
            Topic(t["name"], t.get("subscription_dlq"), t.get("raw_message_delivery")) for t in raw.get("topics", ())
        ),
        publisher_log=PublisherLog(log["log_group"], log["message_id_field"], log.get("business_key_field"))
        if log
        else None,
        tags=tuple(raw.get("tags", ())),
        metrics=raw.get("metrics", {}),
    )


def _check_class(source: Source, at: tuple[str | int, ...], cls: str, classes: Mapping[str, str]) -> None:
    if cls not in classes:
        raise source.error(at, f"unknown class '{cls}'", references.suggest(cls, list(classes), "queues.yaml classes"))


_METRIC_KEYS = {"name", "title", "for_each", "applies_to", "by_class", "$schema", "composite", "maintenance"}
# A composite's state comes from the monitors it combines: these would be ignored, so they are refused.
_NOT_COMPOSITE = ("query", "thresholds", "threshold_basis", "evaluation_delay", "require_full_window", "for_each")


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
    composite = data.get("composite")
    if composite is not None:
        for key in _NOT_COMPOSITE:
            if key in data:
                raise source.error(
                    (key,),
                    f"a composite metric has no {key}: its state comes from the metrics it combines",
                    f"remove {key}, or remove composite to make this a metric of its own",
                )
    else:
        for key in ("query", "thresholds"):
            if key not in data:
                raise source.error(
                    (),
                    f"the metric has no {key}",
                    f"add {key} (or composite, to combine other metrics of the same queue)",
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
        composite=composite,
        maintenance=data.get("maintenance", LIVE),
    )


def _environment(source: Source, now: datetime) -> Environment:
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
        renotify_audiences=tuple(data.get("renotify_audiences", ("page",))),
        metrics_source=data.get("metrics_source", "crawler"),
        maintenance=maintenance.windows(source, now),
        slo=data.get("slo", {}),
        account_tag=data["aws"].get("account_tag"),
    )
