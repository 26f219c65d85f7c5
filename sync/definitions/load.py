"""Read and validate the definitions folder into frozen dataclasses; everything after this trusts them."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path

from sync.core.namespaces import Ownership
from sync.definitions import catalogue, files, maintenance, markers, references, regions, scenario
from sync.definitions.inventory import check_class, inventory_queues, queues_in
from sync.definitions.model import LIVE, DashboardTemplate, Definitions, Environment, Metric
from sync.definitions.source import Source
from sync.errors import ObsError, Problem, Problems

INVENTORY = "queues.yaml"
SCENARIOS = "scenarios"


def load(root: Path, now: datetime | None = None, *, scenarios: bool = False) -> Definitions:
    """Load every definition file under `root`, validating each against its schema and its references.
    `now` is the time one-time maintenance windows must start after (the current time unless given).
    The scenarios are read with `scenarios` only: `obs test` and `obs validate` use them, they are most of a
    load's time, and a scenario being edited must not stop a sync.

    Every check that does not depend on another's result runs, so one run reports every problem of every
    file, sorted by file and line. What refers to a file, queue or metric that failed its own checks is not
    checked (a note says so once): one mistake is reported once, not again at each place that names it."""
    if not (root / INVENTORY).exists():  # one that exists but is no regular file is refused by the reader
        raise _not_definitions(root)
    problems = Problems()
    inventories = files.collecting(problems, lambda: [files.read_checked(root, INVENTORY, "queues")])
    declared = files.collecting(problems, lambda: catalogue.declared(root))
    # With a catalogue, the definitions' own metrics and dashboards are optional.
    optional = (root / catalogue.FILE).exists()
    metric_files = files.in_folder(root, "monitors", "metric", problems, optional)
    dashboard_files = files.in_folder(root, "dashboards", "dashboard", problems, optional)
    environment_files = files.in_folder(root, "environments", "environment", problems)
    scenario_files = files.in_optional_folder(root, SCENARIOS, "scenario", problems) if scenarios else []
    if not inventories:  # everything else names its classes and queues: nothing more can be checked
        problems.note(Problem(_SKIPPED.format(f"{INVENTORY} is valid")))
        problems.raise_any()
    failed = _Failed(
        metrics=files.failed(root, "monitors", metric_files),
        environments=files.failed(root, "environments", environment_files),
        dashboards=files.failed(root, "dashboards", dashboard_files),
    )
    markers.check_user_text(dashboard_files, environment_files, problems)
    used = _catalogue(root, declared, inventories[0], metric_files, dashboard_files, problems)
    if used is not None:
        metric_files = [*used.metrics, *metric_files]
        dashboard_files = [*used.dashboards, *dashboard_files]
    defs = _definitions(root, inventories[0], metric_files, dashboard_files, environment_files, now, problems, failed)
    defs = replace(defs, catalogue=used.use if used else None)
    references.check(defs, problems, failed.metrics, failed.dashboards, failed.queues)
    maintenance.check(defs, problems, failed.metrics, failed.queues)
    found = _scenarios(scenario_files, inventories[0], defs, problems, failed)
    if problems and failed.any():
        problems.note(Problem(_SKIPPED.format("the files above are valid")))
    problems.raise_any()
    return replace(defs, scenarios=found)


def _catalogue(
    root: Path,
    declared: list[Source],
    inventory: Source,
    metrics: list[Source],
    dashboards: list[Source],
    problems: Problems,
) -> catalogue.Used | None:
    """The catalogue catalogue.yaml names, if any. Without it nothing else can be checked: its problems end the load."""
    if not declared and not (root / catalogue.FILE).exists():
        return None
    classes = {name: spec["description"] for name, spec in inventory.data["classes"].items()}
    used = problems.attempt(catalogue.used, declared[0], classes, inventory) if declared else None
    if used is None:
        problems.note(Problem(_SKIPPED.format(f"{catalogue.FILE} is valid")))
        problems.raise_any()
        return None
    problems.attempt(catalogue.check_own, used, metrics, "metric")
    problems.attempt(catalogue.check_own, used, dashboards, "dashboard")
    return used


def _not_definitions(root: Path) -> ObsError:
    """No definitions here: say whether the folder exists at all, and point to one above that has them."""
    fix = "run obs from your definitions folder, or point to it with --definitions DIR or OBS_DEFINITIONS"
    shown = str(root) if root.is_absolute() else f"{root} ({root.absolute()})"
    if not root.is_dir():
        return ObsError.of(f"no folder {shown}", fix)
    above = next((p for p in root.absolute().parents if (p / INVENTORY).is_file()), None)
    if above is not None:
        fix = f"the definitions seem to be in {above}: run obs there, or point to it with --definitions {above}"
    return ObsError.of(f"no {INVENTORY} in {shown}", fix)


_SKIPPED = "note: what refers to a definition with errors was not checked against it: run obs validate again once {}"


@dataclass
class _Failed:
    """Names whose definitions failed their own checks: what refers to them is not checked."""

    metrics: set[str] = field(default_factory=set)
    environments: set[str] = field(default_factory=set)
    dashboards: set[str] = field(default_factory=set)
    queues: set[str] = field(default_factory=set)

    def any(self) -> bool:
        return bool(self.metrics or self.environments or self.dashboards or self.queues)


def _definitions(
    root: Path,
    inventory: Source,
    metric_files: list[Source],
    dashboard_files: list[Source],
    environment_files: list[Source],
    now: datetime | None,
    problems: Problems,
    failed: _Failed,
) -> Definitions:
    classes = {name: spec["description"] for name, spec in inventory.data["classes"].items()}
    queues, broken = inventory_queues(inventory, classes, problems)
    failed.queues |= broken
    metrics = tuple(_metric(s, classes, problems) for s in metric_files)
    dashboards = tuple(DashboardTemplate(s.data["name"], s.data, s) for s in dashboard_files)
    moment = now or datetime.now(UTC)
    owner = problems.attempt(ownership, inventory) or Ownership(None, False)
    environments = tuple(replace(_environment(s, moment, problems), ownership=owner) for s in environment_files)
    env_queues = {env.name: queues_in(env, inventory, queues, problems) for env in environments}
    processing = {
        name: spec["max_processing_seconds"]
        for name, spec in inventory.data["classes"].items()
        if "max_processing_seconds" in spec
    }
    slo_classes = {name: spec["slo"] for name, spec in inventory.data["classes"].items() if "slo" in spec}
    return Definitions(
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


def _scenarios(
    sources: list[Source], inventory: Source, defs: Definitions, problems: Problems, failed: _Failed
) -> tuple[scenario.Scenario, ...]:
    raw_queues = {raw["name"]: raw for raw in inventory.data["queues"] if raw["name"] not in failed.queues}
    metrics = [m.name for m in defs.metrics]
    envs = [e.name for e in defs.environments]
    skipped = scenario.Skipped(frozenset(failed.queues), frozenset(failed.metrics), frozenset(failed.environments))
    out = []
    for source in sources:
        stem = source.path.rsplit("/", 1)[-1].rsplit(".", 1)[0]
        found = problems.attempt(scenario.scenario, source, stem, raw_queues, metrics, envs, skipped)
        if found is not None:
            out.append(found)
    return tuple(out)


_METRIC_KEYS = {"name", "title", "for_each", "applies_to", "by_class", "$schema", "composite", "maintenance"}
# A composite's state comes from the monitors it combines: these would be ignored, so they are refused.
_NOT_COMPOSITE = ("query", "thresholds", "threshold_basis", "evaluation_delay", "require_full_window", "for_each")


def _metric(source: Source, classes: Mapping[str, str], problems: Problems) -> Metric:
    """The metric of a file; each problem with it goes to `problems` (the file passed its schema, so the
    Metric can be built either way)."""
    data = source.data
    applies = data.get("applies_to", {})
    for index, cls in enumerate(applies.get("classes", ())):
        problems.attempt(check_class, source, ("applies_to", "classes", index), cls, classes)
    classes_listed = applies.get("classes")
    for cls in data.get("by_class", {}):
        problems.attempt(check_class, source, ("by_class", cls), cls, classes)
        if classes_listed and cls not in classes_listed:
            problems.add(
                source.error(
                    ("by_class", cls),
                    f"by_class.{cls} is never used: the metric applies only to {', '.join(classes_listed)}",
                    f"remove it, or add {cls} to applies_to.classes",
                )
            )
    composite = data.get("composite")
    if composite is not None:
        for key in _NOT_COMPOSITE:
            if key in data:
                problems.add(
                    source.error(
                        (key,),
                        f"a composite metric has no {key}: its state comes from the metrics it combines",
                        f"remove {key}, or remove composite to make this a metric of its own",
                    )
                )
    else:
        for key in ("query", "thresholds"):
            if key not in data:
                problems.add(
                    source.error(
                        (),
                        f"the metric has no {key}",
                        f"add {key} (or composite, to combine other metrics of the same queue)",
                    )
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


def _environment(source: Source, now: datetime, problems: Problems) -> Environment:
    data = source.data
    problems.attempt(regions.check, source, ("aws", "region"), data["aws"]["region"])
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
        maintenance=maintenance.windows(source, now, problems),
        slo=data.get("slo", {}),
        account_tag=data["aws"].get("account_tag"),
        sqs_counters=data["aws"].get("sqs_counters"),
        page_grouping_minutes=data.get("page_grouping_minutes", 0),
    )
