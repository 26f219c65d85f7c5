"""A metric that rests on how Datadog holds the SQS counters ([[sqs_count_scale]]) makes monitors only in an
environment that declares it (aws.sqs_counters), scaled to messages there; validate names where it is left out."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sync.cli.app import main
from sync.definitions.load import load
from sync.expand.desired import expand

DRAIN = """\
name: drain_minutes
title: backlog drains slowly
applies_to: {classes: [short], requires: [worker]}
query: >-
  sum(last_15m):default_zero(max:aws.sqs.approximate_number_of_messages_visible{queuename:[[queue_name]]})
  / ( [[sqs_count_scale]] * sum:aws.sqs.number_of_messages_deleted{queuename:[[queue_name]]}.as_count() ) > [[critical]]
thresholds: {critical: 30}
priority: 3
message: "[[queue_name]] needs {{value}} minutes to drain."
"""
SLOW = """\
name: drain_slow
title: large backlog drains slowly
applies_to: {classes: [short], requires: [worker]}
composite: "[[metric:drain_minutes]] && [[metric:depth]]"
priority: 3
message: "[[queue_name]] drains slowly."
"""


def _declare(defs: Path, env: str, unit: str) -> None:
    path = defs / "environments" / f"{env}.yaml"
    lines = path.read_text().split("\n")
    at = next(i for i, line in enumerate(lines) if line.startswith("aws: {"))
    lines[at] = lines[at].removesuffix("}") + f", sqs_counters: {unit}}}"
    path.write_text("\n".join(lines))


@pytest.fixture
def defs(example_copy: Path) -> Path:
    (example_copy / "monitors" / "drain_minutes.yaml").write_text(DRAIN)
    (example_copy / "monitors" / "drain_slow.yaml").write_text(SLOW)
    _declare(example_copy, "prod", "counts")
    _declare(example_copy, "staging", "per_second")
    return example_copy


def _queries(defs: Path, env: str) -> dict[str, str]:
    loaded = load(defs)
    return {r.key: str(r.body.get("query", "")) for r in expand(loaded, env)}


def test_the_deletes_are_scaled_to_messages_by_the_declared_unit(defs: Path) -> None:
    assert "/ ( 1 * sum:aws.sqs.number_of_messages_deleted" in _queries(defs, "prod")["prod/default/drain_minutes"]
    assert "/ ( 60 * sum:" in _queries(defs, "staging")["staging/default/drain_minutes"]


def test_an_environment_that_declares_nothing_makes_neither_the_metric_nor_its_composite(defs: Path) -> None:
    dev = _queries(defs, "dev")
    assert not [key for key in dev if "/drain_" in key]
    assert "dev/default/depth" in dev  # the rest of the environment is made as before
    assert "prod/default/drain_slow" in _queries(defs, "prod")


def test_validate_names_each_environment_that_leaves_them_out(defs: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--definitions", str(defs), "validate"]) == 0
    err = capsys.readouterr().err
    [note] = err.splitlines()
    assert note.startswith("note: environments/dev.yaml:3: aws: drain_minutes, drain_slow make no monitors in dev: ")
    assert "declare aws.sqs_counters" in note
    assert main(["--definitions", str(defs), "validate", "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["notes"] == [note.removeprefix("note: ")]


def test_an_unknown_unit_is_refused_with_the_choices(defs: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _declare(defs, "dev", "per_minute")
    assert main(["--definitions", str(defs), "validate"]) == 1
    err = capsys.readouterr().err
    assert "environments/dev.yaml:3: aws.sqs_counters" in err and "counts" in err and "per_second" in err
