"""The standard catalogue shipped with obs, used by name from catalogue.yaml: overrides change only what they
name, a disabled metric makes no monitor, a definitions set's own classes and metrics work beside it, and
mistakes are clear errors with file and line."""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import referencing
import yaml

from sync.cli.app import main
from tests.conftest import ROOT


@pytest.fixture
def defs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    """A new definitions folder, as `obs init` writes it: it uses the standard catalogue by name."""
    folder = tmp_path / "defs"
    assert main(["init", str(folder), "--env", "prod"]) == 0
    capsys.readouterr()
    return folder


def rendered(folder: Path, out: Path) -> dict[str, dict[str, object]]:
    """Every body `obs render --env prod` writes, by its path under the output folder."""
    assert main(["--definitions", str(folder), "render", "--env", "prod", "--out", str(out)]) == 0
    return {p.relative_to(out).as_posix(): json.loads(p.read_text()) for p in sorted(out.rglob("*.json"))}


def catalogue(folder: Path, text: str) -> None:
    (folder / "catalogue.yaml").write_text("use: standard\n" + text)


def error_of(folder: Path, capsys: pytest.CaptureFixture[str]) -> str:
    capsys.readouterr()
    assert main(["--definitions", str(folder), "validate"]) == 1
    out, err = capsys.readouterr()
    assert out == ""
    return err


def test_the_package_ships_the_catalogue_the_repository_keeps(defs: Path) -> None:
    shipped = resources.files("sync.definitions") / "catalogues" / "standard"
    for part in ("monitors", "dashboards"):
        names = sorted(p.name for p in (shipped / part).iterdir() if p.name.endswith(".yaml"))
        assert names == sorted(p.name for p in (ROOT / part).glob("*.yaml")) != []
        for name in names:
            assert (shipped / part / name).read_text() == (ROOT / part / name).read_text()


def test_the_wheel_takes_the_catalogue_as_package_data() -> None:
    text = (ROOT / "pyproject.toml").read_text()
    assert '"catalogues/*/monitors/*.yaml", "catalogues/*/dashboards/*.yaml"' in text


def test_a_threshold_override_changes_only_that_monitor(
    defs: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = rendered(defs, tmp_path / "before")
    catalogue(defs, "overrides:\n  depth:\n    thresholds: {critical: 4321, warning: 1234}\n")
    after = rendered(defs, tmp_path / "after")
    changed = sorted(path for path in before if before[path] != after.get(path))
    assert "monitors/prod.orders.depth.json" in changed
    assert all(path.endswith(".depth.json") for path in changed), changed
    body = after["monitors/prod.orders.depth.json"]
    assert body["options"]["thresholds"]["critical"] == 4321  # type: ignore[index]
    assert set(after) == set(before)


def test_an_override_per_class_reaches_the_class(defs: Path, tmp_path: Path) -> None:
    before = rendered(defs, tmp_path / "before")
    catalogue(defs, "overrides:\n  depth:\n    by_class:\n      long: {thresholds: {critical: 770, warning: null}}\n")
    after = rendered(defs, tmp_path / "after")
    assert sorted(path for path in before if before[path] != after[path]) == ["monitors/prod.reports.depth.json"]
    shipped = yaml.safe_load((ROOT / "monitors" / "depth.yaml").read_text())["by_class"]["long"]["thresholds"]
    was, now = (found["monitors/prod.reports.depth.json"]["options"]["thresholds"] for found in (before, after))  # type: ignore[index]
    assert now["critical"] / was["critical"] == 770 / shipped["critical"]  # the same basis, whatever it is


def test_disabling_a_metric_removes_its_monitors(defs: Path, tmp_path: Path) -> None:
    before = rendered(defs, tmp_path / "before")
    assert [p for p in before if p.endswith(".worker_cpu.json")] != []
    catalogue(defs, "overrides:\n  worker_cpu: {enabled: false}\n")
    after = rendered(defs, tmp_path / "after")
    assert set(before) - set(after) == {p for p in before if p.endswith(".worker_cpu.json")}
    assert set(after) < set(before)
    kept = {p for p in after if not p.startswith("dashboards/")}  # the dashboard lists the monitors
    assert all(after[p] == before[p] for p in kept)


def test_an_unknown_override_is_a_clear_error(defs: Path, capsys: pytest.CaptureFixture[str]) -> None:
    catalogue(defs, "overrides:\n  worker_cpu: {enabled: false}\n  deph:\n    thresholds: {critical: 1}\n")
    err = error_of(defs, capsys)
    assert err == (
        "error: catalogue.yaml:4: overrides.deph: unknown metric of the standard catalogue 'deph': "
        "did you mean 'depth'?\n"
        "note: what refers to a definition with errors was not checked against it: "
        "run obs validate again once catalogue.yaml is valid\n"
        "1 problem in 1 file\n"
    )


def test_an_override_is_checked_like_any_settings(defs: Path, capsys: pytest.CaptureFixture[str]) -> None:
    catalogue(defs, "overrides:\n  depth:\n    notify: {alert: pager}\n")
    err = error_of(defs, capsys)
    assert err.startswith("error: catalogue.yaml:4: overrides.depth.notify.alert: audience 'pager' is not declared")


def test_a_metric_another_combines_cannot_be_left_out_alone(defs: Path, capsys: pytest.CaptureFixture[str]) -> None:
    catalogue(defs, "overrides:\n  deletes_none: {enabled: false}\n")
    err = error_of(defs, capsys)
    assert "catalogue.yaml:3: overrides.deletes_none.enabled: metric 'consumers_stuck' of the standard" in err
    assert "disable 'consumers_stuck' too" in err


def test_own_class_names_map_onto_the_catalogues(
    defs: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = rendered(defs, tmp_path / "before")
    inventory = defs / "queues.yaml"
    text = inventory.read_text()
    renamed = text.replace("  short:\n", "  critical:\n").replace("class: short", "class: critical")
    inventory.write_text(renamed)
    err = error_of(defs, capsys)
    line = renamed.splitlines().index("  critical:") + 1
    assert err.startswith(
        f"error: queues.yaml:{line}: classes.critical: class 'critical' is not a class of the standard"
    )
    assert "classes: {critical: feature}" in err or "e.g. classes: {critical:" in err

    catalogue(defs, "classes: {critical: short}\n")
    after = rendered(defs, tmp_path / "after")
    assert set(after) == set(before)
    depth = after["monitors/prod.orders.depth.json"]
    assert "queue-class:critical" in depth["tags"]  # type: ignore[operator]
    was = before["monitors/prod.orders.depth.json"]
    assert (depth["query"], depth["options"]) == (was["query"], was["options"])  # the class's name aside


def test_a_mapping_to_an_unknown_class_is_a_clear_error(defs: Path, capsys: pytest.CaptureFixture[str]) -> None:
    catalogue(defs, "classes: {short: shrot}\n")
    err = error_of(defs, capsys)
    assert err == (
        "error: catalogue.yaml:2: classes.short: unknown catalogue class 'shrot': did you mean 'short'?\n"
        "note: what refers to a definition with errors was not checked against it: "
        "run obs validate again once catalogue.yaml is valid\n"
        "1 problem in 1 file\n"
    )


def test_own_metrics_work_beside_the_catalogue(defs: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    before = rendered(defs, tmp_path / "before")
    (defs / "monitors").mkdir()
    own = (ROOT / "monitors" / "dlq.yaml").read_text()
    (defs / "monitors" / "parked.yaml").write_text(own.replace("name: dlq", "name: parked"))
    after = rendered(defs, tmp_path / "after")
    assert set(after) - set(before) == {"monitors/prod.orders.parked.json", "monitors/prod.reports.parked.json"} | {
        "monitors/prod.imports.parked.json"
    }

    (defs / "monitors" / "dlq.yaml").write_text(own)
    err = error_of(defs, capsys)
    assert err.startswith("error: monitors/dlq.yaml:")
    assert "metric 'dlq' is also in the standard catalogue (catalogue.yaml)" in err

    catalogue(defs, "overrides:\n  dlq: {enabled: false}\n")  # disabled there, a file of one's own replaces it
    assert main(["--definitions", str(defs), "validate"]) == 0


def test_editors_check_catalogue_yaml_with_its_schema(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["schemas", "--out", str(tmp_path)]) == 0
    schemas = {p.name: json.loads(p.read_text()) for p in tmp_path.glob("*.schema.json")}
    registry: referencing.Registry[Any] = referencing.Registry().with_resources(
        (name, referencing.Resource.from_contents(s)) for name, s in schemas.items()
    )
    validator = jsonschema.Draft202012Validator(schemas["catalogue.schema.json"], registry=registry)
    good = {
        "use": "standard",
        "classes": {"critical": "short"},
        "overrides": {"depth": {"thresholds": {"critical": 1}}},
    }
    assert list(validator.iter_errors(good)) == []
    typo = {"use": "standard", "overrides": {"depth": {"threshold": {"critical": 1}}}}
    assert [e.validator for e in validator.iter_errors(typo)] == ["unevaluatedProperties"]
    assert [e.validator for e in validator.iter_errors({"use": "mine"})] == ["enum"]
