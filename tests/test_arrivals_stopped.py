"""A queue that declares `expects_messages_within` gets a silence check: its producers stopping pages; a queue
that declares nothing gets none, and the declaration is checked."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from sync.cli.app import main
from sync.definitions.load import load
from sync.expand.desired import expand
from tests.conftest import ROOT

STORY = ROOT / "tests" / "fixtures" / "story"
SILENCE = (ROOT / "monitors" / "arrivals_stopped.yaml").read_text()
SCENARIO = """\
name: the producers of orders stop
queue: orders
incident_at: 60
duration: 240
series:
  - metric: aws.sqs.number_of_messages_sent
    of: queue
    shape: [{until: 60, value: 30}, {until: 240, value: 0}]
expect:
  - {monitor: arrivals_stopped, pages: {within: 40}}
"""
HEALTHY = (
    SCENARIO.replace("the producers of orders stop", "orders has a quiet spell")
    .replace(
        "[{until: 60, value: 30}, {until: 240, value: 0}]",
        "[{until: 60, value: 30}, {until: 80, value: 0}, {until: 240, value: 30}]",
    )
    .replace("pages: {within: 40}", "pages: never")
)


@pytest.fixture
def defs(tmp_path: Path) -> Path:
    target = tmp_path / "defs"
    shutil.copytree(STORY, target)
    shutil.rmtree(target / "scenarios")
    (target / "scenarios").mkdir()
    (target / "monitors" / "arrivals_stopped.yaml").write_text(SILENCE)
    return target


def _declare(defs: Path, within: str) -> None:
    inventory = defs / "queues.yaml"
    text = inventory.read_text()
    assert "  - name: orders\n" in text
    inventory.write_text(
        text.replace("  - name: orders\n", f"  - name: orders\n    expects_messages_within: {within}\n")
    )


def test_only_a_queue_that_declares_its_traffic_gets_the_check(defs: Path) -> None:
    assert not [r for r in expand(load(defs), "prod") if r.key.endswith("/arrivals_stopped")]
    _declare(defs, "30m")
    [monitor] = [r for r in expand(load(defs), "prod") if r.key.endswith("/arrivals_stopped")]
    assert str(monitor.body["query"]).startswith("sum(last_30m):default_zero(sum:aws.sqs.number_of_messages_sent{")


def test_producers_that_stop_page_and_a_shorter_quiet_spell_does_not(
    defs: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _declare(defs, "30m")
    (defs / "scenarios" / "stop.yaml").write_text(SCENARIO)
    (defs / "scenarios" / "quiet.yaml").write_text(HEALTHY)
    code = main(["--definitions", str(defs), "test"])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "arrivals_stopped: pages within 40 min: first page at minute" in out
    assert "arrivals_stopped: never pages: paged 0 times" in out


def test_a_silence_longer_than_a_day_is_refused(defs: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _declare(defs, "25h")
    assert main(["--definitions", str(defs), "validate"]) == 1
    err = capsys.readouterr().err
    assert "expects_messages_within: 1500 minutes of silence is more than a day" in err
