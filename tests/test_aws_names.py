"""Physical names against AWS's limits and Datadog's lowercase tag values, table-driven."""

from __future__ import annotations

import pytest

from sync.expand.aws_names import name_problem


@pytest.mark.parametrize(
    ("kind", "name", "fifo", "problem"),
    [
        ("queue", "prod-critical", False, None),
        ("queue", "a" * 80, False, None),
        ("queue", "a" * 81, False, "has 81 characters; AWS allows at most 80"),
        ("queue", "a" * 75 + ".fifo", True, None),  # the suffix counts within the 80
        ("queue", "a" * 76 + ".fifo", True, "has 81 characters"),
        ("queue", "prod.critical", False, "characters AWS does not allow ('.')"),
        ("queue", "prod-critical.fifo", False, "characters AWS does not allow ('.')"),  # not a FIFO queue
        ("queue", ".fifo", True, "is empty"),
        ("queue", "Prod-critical", False, "has capital letters"),
        ("queue", "prod critical", False, "characters AWS does not allow (' ')"),
        ("topic", "t" * 256, False, None),
        ("topic", "t" * 257, False, "AWS allows at most 256"),
        ("topic", "prod-Jobs.fifo", True, "has capital letters"),
        ("cluster", "c" * 255, False, None),
        ("cluster", "c" * 256, False, "AWS allows at most 255"),
        ("cluster", "jobs.fifo", True, "characters AWS does not allow"),  # clusters have no FIFO suffix
        ("service", "prod_Worker", False, "has capital letters"),
        ("service", "prod-wörker", False, "characters AWS does not allow ('ö')"),
    ],
)
def test_names(kind: str, name: str, fifo: bool, problem: str | None) -> None:
    found = name_problem(kind, name, fifo=fifo)
    if problem is None:
        assert found is None
    else:
        assert found is not None and problem in found[0]
