"""A generated definitions set: the shipped example's environments, metrics and dashboard over N queues.

Queue classes rotate short, long, feature, as in the example, so every metric and override path is used.
Optionally every topic's subscription has a redrive DLQ (so the subscription_dlq metric applies too), and
queues carry settings per metric in the inventory (for example changed thresholds).
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent

_CLASSES = ("short", "long", "feature")

# Queue name -> metric name -> the settings written under the queue's `metrics` in queues.yaml.
QueueMetrics = Mapping[str, Mapping[str, Mapping[str, Any]]]


def queue_name(index: int) -> str:
    return f"q{index:04d}"


def queue(index: int, *, subscription_dlq: bool = False, metrics: Mapping[str, Mapping[str, Any]] | None = None) -> str:
    name = queue_name(index)
    kind = _CLASSES[index % len(_CLASSES)]
    least = 0 if kind == "feature" else 1  # feature queues idle at zero workers
    redrive = f", subscription_dlq: {name}-undeliverable" if subscription_dlq else ""
    lines = [
        f"  - name: {name}",
        f"    class: {kind}",
        f"    description: Generated queue {index}.",
        f"    worker: {{cluster: jobs, service: {name}-worker, min_tasks: {least}, max_tasks: 10}}",
        f"    dlq: {{name: {name}-dlq, max_receive_count: 3}}",
        f"    topics: [{{name: {name}-topic{redrive}}}]",
        f"    runbook: https://runbooks.example.com/jobs/{name}",
        "    owner: platform",
    ]
    if kind == "short":
        lines.insert(3, "    slo_seconds: 60")
    if metrics:
        # JSON is YAML's flow style: one line per metric.
        lines += ["    metrics:"] + [f"      {metric}: {json.dumps(settings)}" for metric, settings in metrics.items()]
    return "\n".join(lines) + "\n"


def copy_example(target: Path) -> Path:
    """A writable copy of the shipped example definitions."""
    target.mkdir(parents=True, exist_ok=True)
    for part in ("monitors", "dashboards", "environments"):
        shutil.copytree(ROOT / part, target / part)
    shutil.copy(ROOT / "queues.yaml", target / "queues.yaml")
    return target


def write(target: Path, queues: int, *, subscription_dlqs: bool = False, metrics: QueueMetrics | None = None) -> Path:
    """Write a definitions folder with `queues` generated queues; environment overrides of the example's
    own queues are dropped, since those queues are not in the set. `metrics` adds settings per queue and
    metric; `subscription_dlqs` gives every topic subscription a redrive DLQ."""
    target.mkdir(parents=True, exist_ok=True)
    for part in ("monitors", "dashboards", "environments"):
        shutil.rmtree(target / part, ignore_errors=True)
        shutil.copytree(ROOT / part, target / part)
    example = (ROOT / "queues.yaml").read_text()
    head = example[: example.index("queues:\n")]
    settings = metrics or {}
    inventory = "".join(
        queue(i, subscription_dlq=subscription_dlqs, metrics=settings.get(queue_name(i))) for i in range(queues)
    )
    (target / "queues.yaml").write_text(head + "queues:\n" + inventory)
    for env in (target / "environments").glob("*.yaml"):
        text = env.read_text()
        if "\nqueues:\n" in text:  # the example's per-queue overrides name queues this set does not have
            start = text.index("\nqueues:\n") + 1
            rest = text[start:].split("\n")
            end = next((i for i, line in enumerate(rest[1:], 1) if line and not line.startswith((" ", "#"))), len(rest))
            text = text[:start] + "\n".join(rest[end:])
        if "queues: [low, default]" in text:  # prod's maintenance window names two of the example's queues
            text = text[: text.index("maintenance:\n")]
        env.write_text(text)
    return target
