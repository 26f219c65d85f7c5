"""One retention rule for a DLQ, shared by validation, the dlq_age thresholds and the audit (whose check is
tested in tests/trace/test_audit_checks.py)."""

from __future__ import annotations

from pathlib import Path

from sync.core.retention import dlq_life
from sync.definitions.load import load
from sync.expand.desired import expand


def test_a_standard_queue_s_message_brings_its_age_into_the_dlq() -> None:
    assert dlq_life(345_600, 1_209_600, fifo=False) == 864_000
    assert dlq_life(1_209_600, 1_209_600, fifo=False) == 0  # may expire as soon as it is parked
    assert dlq_life(1_209_600, 345_600, fifo=True) == 345_600  # FIFO restarts the clock


def test_dlq_age_pages_at_half_of_what_a_parked_message_is_sure_to_have(example_copy: Path) -> None:
    metric = example_copy / "monitors" / "dlq_age.yaml"
    metric.write_text(metric.read_text().replace("dlq_retention_seconds\n", "dlq_life_seconds\n", 1))
    assert "threshold_basis: dlq_life_seconds" in metric.read_text()
    defs = load(example_copy)
    bodies = {r.key: r.body for r in expand(defs, "prod")}
    low = next(q for q in defs.queues if q.name == "low")
    assert low.dlq is not None
    half = (low.dlq.retention_seconds - low.retention_seconds) // 2
    assert bodies["prod/low/dlq_age"]["options"]["thresholds"]["critical"] == half
