"""A generated definitions set: the shipped example's environments, metrics and dashboard over N queues.

Queue classes rotate short, long, feature, as in the example, so every metric and override path is used.
"""

from __future__ import annotations

import shutil
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

_CLASSES = ("short", "long", "feature")


def queue(index: int) -> str:
    name = f"q{index:04d}"
    kind = _CLASSES[index % len(_CLASSES)]
    least = 0 if kind == "feature" else 1  # feature queues idle at zero workers
    lines = [
        f"  - name: {name}",
        f"    class: {kind}",
        f"    description: Generated queue {index}.",
        f"    worker: {{cluster: jobs, service: {name}-worker, min_tasks: {least}, max_tasks: 10}}",
        f"    dlq: {{name: {name}-dlq, max_receive_count: 3}}",
        f"    topics: [{{name: {name}-topic}}]",
        f"    runbook: https://runbooks.example.com/jobs/{name}",
        "    owner: platform",
    ]
    if kind == "short":
        lines.insert(3, "    slo_seconds: 60")
    return "\n".join(lines) + "\n"


def copy_example(target: Path) -> Path:
    """A writable copy of the shipped example definitions."""
    target.mkdir(parents=True, exist_ok=True)
    for part in ("monitors", "dashboards", "environments"):
        shutil.copytree(ROOT / part, target / part)
    shutil.copy(ROOT / "queues.yaml", target / "queues.yaml")
    return target


def write(target: Path, queues: int) -> Path:
    """Write a definitions folder with `queues` generated queues; environment overrides of the example's
    own queues are dropped, since those queues are not in the set."""
    target.mkdir(parents=True, exist_ok=True)
    for part in ("monitors", "dashboards", "environments"):
        shutil.rmtree(target / part, ignore_errors=True)
        shutil.copytree(ROOT / part, target / part)
    example = (ROOT / "queues.yaml").read_text()
    head = example[: example.index("queues:\n")]
    (target / "queues.yaml").write_text(head + "queues:\n" + "".join(queue(i) for i in range(queues)))
    for env in (target / "environments").glob("*.yaml"):
        text = env.read_text()
        if "\nqueues:\n" in text:  # the example's per-queue overrides name queues this set does not have
            start = text.index("\nqueues:\n") + 1
            rest = text[start:].split("\n")
            end = next((i for i, line in enumerate(rest[1:], 1) if line and not line.startswith((" ", "#"))), len(rest))
            text = text[:start] + "\n".join(rest[end:])
        env.write_text(text)
    return target
