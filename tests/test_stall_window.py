"""[[stall_minutes]]: a window that always holds a delete while a queue's workers are healthy, from the
queue's own max_processing_seconds or its class's."""

from __future__ import annotations

from pathlib import Path

import pytest

from sync.definitions.load import load
from sync.expand.desired import expand
from sync.expand.monitor import stall_minutes

METRIC = """\
name: quiet
title: nothing deleted
applies_to: {requires: [worker]}
query: >-
  sum(last_[[stall_minutes]]m):default_zero(sum:aws.sqs.number_of_messages_deleted{queuename:[[queue_name]]}.as_count())
  <= [[critical]]
thresholds: {critical: 0}
priority: 5
message: "Nothing deleted from [[queue_name]] in [[stall_minutes]] minutes."
"""


@pytest.mark.parametrize(("seconds", "minutes"), [(None, 15), (60, 15), (600, 15), (601, 16), (900, 23), (1200, 30)])
def test_one_and_a_half_of_the_longest_job_and_fifteen_minutes_at_least(seconds: int | None, minutes: int) -> None:
    assert stall_minutes(seconds) == minutes


def test_a_queue_takes_its_class_s_processing_time_unless_it_declares_its_own(example_copy: Path) -> None:
    (example_copy / "monitors" / "quiet.yaml").write_text(METRIC)
    inventory = example_copy / "queues.yaml"
    text = inventory.read_text()
    assert "  - name: high\n" in text
    inventory.write_text(text.replace("  - name: high\n", "  - name: high\n    max_processing_seconds: 1200\n"))
    defs = load(example_copy)
    windows = {}
    for resource in expand(defs, "prod"):
        if resource.key.endswith("/quiet"):
            windows[resource.key.split("/")[1]] = str(resource.body["query"]).split(")")[0]
    classes = {q.name: defs.max_processing_seconds(q) for q in defs.queues}
    assert classes["high"] == 1200
    for queue, window in windows.items():
        assert window == f"sum(last_{stall_minutes(classes[queue])}m", queue
    assert windows["high"] == "sum(last_30m"
