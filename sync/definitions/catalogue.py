"""The catalogues shipped with obs: metrics and a dashboard that a definitions set uses by name in
catalogue.yaml, changing only what differs, so that an upgrade of obs brings their fixes to it."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sync.definitions import composites, files, names, schema
from sync.definitions.model import CatalogueUse
from sync.definitions.source import Source, read
from sync.errors import ObsError, Problem

FILE = "catalogue.yaml"
# Package data; in a checkout of obs these folders link to the top-level monitors/ and dashboards/.
_SHIPPED = Path(__file__).parent / "catalogues"


def folder(name: str) -> Path:
    """Where the catalogue `name` shipped with this obs lives."""
    return _SHIPPED / name


def declared(root: Path) -> list[Source]:
    """catalogue.yaml checked against its schema; none when the definitions use no catalogue."""
    return [files.read_checked(root, FILE, "catalogue")] if (root / FILE).exists() else []


@dataclass(frozen=True)
class Used:
    """A catalogue as these definitions use it: its files with their classes, less what they disable."""

    use: CatalogueUse
    metrics: tuple[Source, ...]
    dashboards: tuple[Source, ...]


def used(declaration: Source, classes: Mapping[str, str], inventory: Source) -> Used:
    """The catalogue catalogue.yaml names, its class names replaced by the definitions' own."""
    name = declaration.data["use"]
    shipped = _read(name, "monitors", "metric")
    kinds = _kinds(declaration, classes, inventory, _classes_of(shipped))
    overrides: Mapping[str, Mapping[str, Any]] = declaration.data.get("overrides", {})
    disabled = {metric for metric, over in overrides.items() if over.get("enabled") is False}
    _check_overrides(declaration, overrides, [s.data for s in shipped], disabled, classes)
    mapped = (_with_classes(s, kinds) for s in shipped if s.data["name"] not in disabled)
    use = CatalogueUse(
        name,
        declaration,
        {m: {k: v for k, v in over.items() if k != "by_class"} for m, over in overrides.items() if m not in disabled},
        {m: over["by_class"] for m, over in overrides.items() if "by_class" in over and m not in disabled},
    )
    return Used(use, tuple(s for s in mapped if s is not None), tuple(_read(name, "dashboards", "dashboard")))


def check_own(used: Used | None, own: Iterable[Source], kind: str) -> None:
    """A file of the definitions' own may not silently stand in for one of the catalogue's."""
    if used is None:
        return
    shipped = {s.data["name"] for s in (used.metrics if kind == "metric" else used.dashboards)}
    clashes = [s for s in own if s.data["name"] in shipped]
    if kind == "metric":
        fix = "change the catalogue's in catalogue.yaml overrides, or disable it there ({}: {{enabled: false}})"
    else:
        fix = "name yours differently (an environment can leave it out: dashboards: {{{}: {{enabled: false}}}})"
    problems = [
        Problem(
            f"{kind} '{s.data['name']}' is also in the {used.use.name} catalogue (catalogue.yaml)",
            fix.format(s.data["name"]),
            file=s.path,
            line=s.line_of(("name",)),
            key="name",
        )
        for s in clashes
    ]
    if problems:
        raise ObsError(*problems)


def _read(name: str, part: str, kind: str) -> list[Source]:
    out = []
    for path in sorted((folder(name) / part).glob("*.yaml")):
        source = read(path, f"[{name} catalogue]/{part}/{path.name}")
        schema.check(source, kind)
        out.append(source)
    return out


def _classes_of(shipped: Iterable[Source]) -> list[str]:
    """The class names the catalogue's metrics are written for."""
    found: set[str] = set()
    for source in shipped:
        found.update(source.data.get("applies_to", {}).get("classes", ()))
        found.update(source.data.get("by_class", {}))
    return sorted(found)


def _kinds(declaration: Source, classes: Mapping[str, str], inventory: Source, known: list[str]) -> dict[str, str]:
    """Each class of the definitions -> the catalogue's class it behaves as."""
    mapping: Mapping[str, str] = declaration.data.get("classes", {})
    problems = [
        p.problems[0]
        for p in (
            *(_unknown(declaration, ("classes", m), m, list(classes), "class", "queues.yaml classes") for m in mapping),
            *(
                _unknown(declaration, ("classes", m), mapping[m], known, "catalogue class", "the catalogue")
                for m in mapping
            ),
        )
        if p is not None
    ]
    kinds = {mine: mapping.get(mine, mine) for mine in classes}
    problems += [
        inventory.error(
            ("classes", mine),
            f"class '{mine}' is not a class of the {declaration.data['use']} catalogue ({', '.join(known)})",
            f"say which one it behaves as in {FILE}, {_which(mine, known)}, or rename it",
        ).problems[0]
        for mine, kind in kinds.items()
        if mine not in mapping and kind not in known
    ]
    if problems:
        raise ObsError(*sorted(problems, key=lambda p: (p.file, p.line or 0)))
    return kinds


# What the standard catalogue's classes are, for the hint that asks which one a class of the user's behaves as.
_CLASS_HINTS = {
    "short": "jobs of seconds, paged on the oldest message's age against slo_seconds",
    "long": "jobs of minutes, watched by their backlog against the workers",
    "feature": "queues that idle at zero workers until work arrives",
}


def _which(mine: str, known: list[str]) -> str:
    """e.g. classes: {critical: short} (short: ...; long: ...): every choice, with what it means, and no guess."""
    ordered = [k for k in _CLASS_HINTS if k in known] + [k for k in known if k not in _CLASS_HINTS]
    meanings = "; ".join(f"{k}: {_CLASS_HINTS[k]}" if k in _CLASS_HINTS else k for k in ordered)
    return f"e.g. classes: {{{mine}: {ordered[0]}}} ({meanings})"


def _unknown(
    source: Source, at: tuple[str, ...], name: str, known: list[str], what: str, where: str
) -> ObsError | None:
    if name in known:
        return None
    return source.error(at, f"unknown {what} '{name}'", names.suggest(name, known, where))


def _check_overrides(
    declaration: Source,
    overrides: Mapping[str, Mapping[str, Any]],
    shipped: list[Mapping[str, Any]],
    disabled: set[str],
    classes: Mapping[str, str],
) -> None:
    """Every override names a metric of the catalogue and a class of the definitions; a metric another one
    combines cannot be left out alone."""
    names = [m["name"] for m in shipped]
    catalogue = f"the {declaration.data['use']} catalogue"
    problems: list[Problem] = []
    for metric, over in overrides.items():
        found = [_unknown(declaration, ("overrides", metric), metric, names, f"metric of {catalogue}", catalogue)]
        for cls in over.get("by_class", {}):
            at = ("overrides", metric, "by_class", cls)
            found.append(_unknown(declaration, at, cls, list(classes), "class", "queues.yaml classes"))
        problems += [error.problems[0] for error in found if error is not None]
    for data in shipped:
        needs = sorted(set(composites.composite_refs(data.get("composite", ""))) & disabled)
        if needs and data["name"] not in disabled:
            problems.append(
                declaration.error(
                    ("overrides", needs[0], "enabled"),
                    f"metric '{data['name']}' of {catalogue} combines '{needs[0]}'",
                    f"disable '{data['name']}' too ({data['name']}: {{enabled: false}}), or keep '{needs[0]}'",
                ).problems[0]
            )
    if problems:
        raise ObsError(*sorted(problems, key=lambda p: p.line or 0))


def _with_classes(source: Source, kinds: Mapping[str, str]) -> Source | None:
    """The metric written for the definitions' classes; None when it applies to none of them."""
    data = dict(source.data)
    lines = dict(source.lines)
    applies = data.get("applies_to", {})
    if "classes" in applies:
        mine = [cls for cls, kind in kinds.items() if kind in applies["classes"]]
        if not mine:
            return None
        data["applies_to"] = {**applies, "classes": mine}
    if "by_class" in data:
        written = data["by_class"]
        data["by_class"] = {cls: written[kind] for cls, kind in kinds.items() if kind in written}
        for cls, kind in kinds.items():
            lines.update({("by_class", cls, *p[2:]): n for p, n in source.lines.items() if p[:2] == ("by_class", kind)})
    return Source(source.path, data, lines)
