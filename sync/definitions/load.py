"""Read and validate the definitions folder into frozen dataclasses; everything after this trusts them."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

from sync.core.namespaces import Ownership
from sync.definitions import files, maintenance, markers, references, scenario
from sync.definitions.inventory import check_class, inventory_queues, queues_in
from sync.definitions.model import LIVE, DashboardTemplate, Definitions, Environment, Metric
from sync.definitions.source import Source
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
    inventories = files.collecting(problems, lambda: [files.read_checked(root, INVENTORY, "queues")])
    metric_files = files.collecting(problems, lambda: files.in_folder(root, "monitors", "metric"))
    dashboard_files = files.collecting(problems, lambda: files.in_folder(root, "dashboards", "dashboard"))
    environment_files = files.collecting(problems, lambda: files.in_folder(root, "environments", "environment"))
    scenario_files = files.collecting(problems, lambda: files.in_optional_folder(root, SCENARIOS, "scenario"))
    if problems:
        raise ObsError(*sorted(problems, key=lambda p: (p.file, p.line or 0)))
    markers.check_user_text(dashboard_files, environment_files)
    inventory = inventories[0]
    classes = {name: spec["description"] for name, spec in inventory.data["classes"].items()}
    queues = inventory_queues(inventory, classes)
    metrics = tuple(_metric(s, classes) for s in metric_files)
    dashboards = tuple(DashboardTemplate(s.data["name"], s.data, s) for s in dashboard_files)
    moment = now or datetime.now(UTC)
    owner = ownership(inventory)
    environments = tuple(replace(_environment(s, moment), ownership=owner) for s in environment_files)
    env_queues = {env.name: queues_in(env, inventory, queues) for env in environments}
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


def ownership(inventory: Source) -> Ownership:
    """The definitions set's namespace, as queues.yaml declares it (its pattern is the schema's)."""
    namespace = inventory.data.get("namespace")
    adopt = bool(inventory.data.get("adopt_unnamespaced", False))
    if adopt and namespace is None:
        raise inventory.error(
            ("adopt_unnamespaced",),
            "adopt_unnamespaced takes objects over into a namespace, and none is declared",
            "add namespace: <name> beside it, or remove adopt_unnamespaced",
        )
    return Ownership(namespace, adopt)


def _scenarios(sources: list[Source], inventory: Source, defs: Definitions) -> tuple[scenario.Scenario, ...]:
    raw_queues = {raw["name"]: raw for raw in inventory.data["queues"]}
    metrics = [m.name for m in defs.metrics]
    envs = [e.name for e in defs.environments]
    problems: list[Problem] = []
    out = []
    for source in sources:
        stem = source.path.rsplit("/", 1)[-1].rsplit(".", 1)[0]
        try:
            out.append(scenario.scenario(source, stem, raw_queues, metrics, envs))
        except ObsError as exc:
            problems.extend(exc.problems)
    if problems:
        raise ObsError(*problems)
    return tuple(out)


_METRIC_KEYS = {"name", "title", "for_each", "applies_to", "by_class", "$schema", "composite", "maintenance"}
# A composite's state comes from the monitors it combines: these would be ignored, so they are refused.
_NOT_COMPOSITE = ("query", "thresholds", "threshold_basis", "evaluation_delay", "require_full_window", "for_each")


def _metric(source: Source, classes: Mapping[str, str]) -> Metric:
    data = source.data
    applies = data.get("applies_to", {})
    for index, cls in enumerate(applies.get("classes", ())):
        check_class(source, ("applies_to", "classes", index), cls, classes)
    classes_listed = applies.get("classes")
    for cls in data.get("by_class", {}):
        check_class(source, ("by_class", cls), cls, classes)
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
