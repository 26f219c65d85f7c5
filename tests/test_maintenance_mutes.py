"""What a maintenance window mutes, and for how long, as each metric file declares it (`maintenance:`).

The fixture is its own small catalogue: a window stops the workers of `jobs` and parks events in `inbox`.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from sync.cli.app import main
from sync.core import durations
from sync.definitions.load import load
from sync.definitions.maintenance import mutes_by_default
from sync.definitions.model import MAINTENANCE
from sync.expand import maintenance
from sync.expand.desired import expand

ROOT = Path(__file__).resolve().parent.parent
FIXTURE = ROOT / "tests" / "fixtures" / "maintenance"
WINDOW = 120  # the fixture's window: 2 h
SETTLE = maintenance.SETTLE_MINUTES["crawler"]
RESTART = maintenance.RESTART_MINUTES["crawler"]


@pytest.fixture
def defs(tmp_path: Path) -> Path:
    target = tmp_path / "defs"
    shutil.copytree(FIXTURE, target)
    return target


def muted(root: Path) -> dict[str, int]:
    """`queue/metric` -> how many minutes each occurrence of the window's downtime lasts."""
    out = {}
    for r in expand(load(root), "prod"):
        if r.kind.name == "downtime":
            _, queue, metric, *_ = r.key.split("/")
            (recurrence,) = r.body["schedule"]["recurrences"]
            minutes = durations.minutes(recurrence["duration"])
            assert minutes is not None, recurrence
            out[f"{queue}/{metric}"] = minutes
    return out


def test_each_metric_is_muted_as_its_file_declares(defs: Path) -> None:
    # Parked work grows until it drains: the window, the queue's drain grace (its SLO, 10 and 20 min) and
    # the time its metrics take to show the drain. Stopped workers page soon after: the window and the
    # metrics' delay only. A live metric, and one that declares nothing, are never muted.
    assert muted(defs) == {
        "jobs/oldest_wait": WINDOW + 10 + SETTLE,
        "jobs/slo-fast-burn": WINDOW + 10 + SETTLE,
        "jobs/slo-slow-burn": WINDOW + 10 + SETTLE,
        "jobs/nothing_deleted": WINDOW + RESTART,
        # `inbox` only receives the parked events: its parked metrics only, not its workers'.
        "inbox/oldest_wait": WINDOW + 20 + SETTLE,
        "inbox/slo-fast-burn": WINDOW + 20 + SETTLE,
        "inbox/slo-slow-burn": WINDOW + 20 + SETTLE,
    }
    assert RESTART < 30  # workers missing after the window page within half an hour of its end


def test_a_renamed_metric_keeps_its_maintenance_behaviour(defs: Path) -> None:
    before = muted(defs)
    for old, new in (("oldest_wait", "wait_time"), ("nothing_deleted", "deletes_stalled")):
        text = (defs / "monitors" / f"{old}.yaml").read_text()
        (defs / "monitors" / f"{old}.yaml").unlink()
        (defs / "monitors" / f"{new}.yaml").write_text(text.replace(f"name: {old}", f"name: {new}"))
    after = muted(defs)
    assert after == {
        k.replace("oldest_wait", "wait_time").replace("nothing_deleted", "deletes_stalled"): v
        for k, v in before.items()
    }


def test_a_metric_that_declares_nothing_stays_live(defs: Path) -> None:
    text = (defs / "monitors" / "nothing_deleted.yaml").read_text()
    (defs / "monitors" / "nothing_deleted.yaml").write_text(text.replace("maintenance: stopped\n", ""))
    assert "jobs/nothing_deleted" not in muted(defs)
    loaded = load(defs)
    assert mutes_by_default(loaded) == ("oldest_wait", "slo-fast-burn", "slo-slow-burn")


def test_a_window_that_names_its_mutes_overrides_the_declarations(defs: Path) -> None:
    env = defs / "environments" / "prod.yaml"
    env.write_text(env.read_text().replace("    parking: [inbox]\n", "    mutes: [task_memory, oldest_wait]\n"))
    # Named although declared live: muted for the window and the metrics' delay, no drain grace.
    assert muted(defs) == {"jobs/task_memory": WINDOW + RESTART, "jobs/oldest_wait": WINDOW + 10 + SETTLE}


def test_a_window_drain_minutes_sets_the_grace_of_parked_metrics_only(defs: Path) -> None:
    env = defs / "environments" / "prod.yaml"
    env.write_text(env.read_text() + "    drain_minutes: 45\n")
    found = muted(defs)
    assert found["jobs/oldest_wait"] == found["inbox/oldest_wait"] == WINDOW + 45 + SETTLE
    assert found["jobs/nothing_deleted"] == WINDOW + RESTART


def test_an_unknown_maintenance_value_is_a_clear_error(defs: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = defs / "monitors" / "task_memory.yaml"
    path.write_text(path.read_text().replace("maintenance: live", "maintenance: sometimes"))
    assert main(["--definitions", str(defs), "validate"]) == 1
    err = capsys.readouterr().err
    assert "monitors/task_memory.yaml:4: maintenance:" in err, err
    assert "parked" in err and "stopped" in err and "live" in err
    assert "Traceback" not in err


def test_the_schema_offers_exactly_the_treatments_the_code_knows() -> None:
    schema = json.loads((ROOT / "sync" / "definitions" / "schemas" / "metric.schema.json").read_text())
    assert tuple(schema["properties"]["maintenance"]["enum"]) == MAINTENANCE


def test_metric_streams_shorten_both_graces(defs: Path) -> None:
    env = defs / "environments" / "prod.yaml"
    env.write_text(env.read_text().replace("name: prod\n", "name: prod\nmetrics_source: streams\n"))
    found = muted(defs)
    assert found["jobs/oldest_wait"] == WINDOW + 10 + maintenance.SETTLE_MINUTES["streams"]
    assert found["jobs/nothing_deleted"] == WINDOW + maintenance.RESTART_MINUTES["streams"]
    assert maintenance.RESTART_MINUTES["streams"] < RESTART


def test_a_window_that_mutes_all_mutes_the_live_metrics_too(defs: Path) -> None:
    env = defs / "environments" / "prod.yaml"
    env.write_text(env.read_text().replace("    parking: [inbox]\n", "    parking: [inbox]\n    mutes: all\n"))
    found = muted(defs)
    # One downtime mutes every monitor of the queue, live ones included, for the longest grace it needs.
    assert found.pop("jobs/all") == WINDOW + 10 + SETTLE
    # `inbox` is only parked into: its parked metrics only, as before.
    assert found == {f"inbox/{m}": WINDOW + 20 + SETTLE for m in ("oldest_wait", "slo-fast-burn", "slo-slow-burn")}
    tags = {
        tuple(r.body["monitor_identifier"]["monitor_tags"])
        for r in expand(load(defs), "prod")
        if r.key.startswith("prod/jobs/all/")
    }
    assert tags == {("env:prod", "managed-by:obs", "queue:jobs")}  # no metric tag: every monitor of the queue


def test_mutes_takes_names_or_all_and_nothing_else(defs: Path, capsys: pytest.CaptureFixture[str]) -> None:
    env = defs / "environments" / "prod.yaml"
    env.write_text(env.read_text().replace("    parking: [inbox]\n", "    parking: [inbox]\n    mutes: everything\n"))
    assert main(["--definitions", str(defs), "validate"]) == 1
    err = capsys.readouterr().err
    assert "environments/prod.yaml:13: maintenance[0].mutes" in err and "write all" in err
