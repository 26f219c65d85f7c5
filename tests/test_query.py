"""The monitor query shape check, table-driven."""

from __future__ import annotations

import pytest

from sync.definitions.query import problems


@pytest.mark.parametrize(
    "query",
    [
        "avg(last_10m):max:aws.sqs.approximate_age_of_oldest_message{queuename:prod-critical} > 30",
        "sum(last_15m):sum:aws.sns.number_of_notifications_failed{topicname:t}.as_count() > 0",
        "avg(last_15m):( max:a{q:x} + max:b{q:x} ) / clamp_min(sum:c{q:x}, 0.1) > 30",
        "sum(last_15m):( default_zero(max:a{q:x}) + default_zero(max:b{q:x}) ) / sum:c{q:x}.as_count() > 30",
        "max(next_1d):forecast(max:a{q:x}, 'linear', 1) >= 967680",
        "max(last_1w):max:a{*} by {host} >= 0.5",
        "change(avg(last_5m),last_5m):avg:a{*} < -10",
    ],
)
def test_accepted(query: str) -> None:
    assert problems(query) == []


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("avg(last_10m):a{*}\n> 1", "spans lines"),
        ("a{*} > 1", "must start with"),
        ("median(last_5m):a{*} > 1", "must start with"),
        ("avg(last_0m):a{*} > 1", "out of range"),
        ("avg(last_169h):a{*} > 1", "out of range"),
        ("avg(last_2d):a{*} > 1", "out of range"),
        ("avg(last_5m):a{*}", "comparator and a number"),
        ("avg(last_5m):a{*} > high", "comparator and a number"),
        ("avg(last_5m):max:a{q:x} / clamp_min(b{q:x}, 1 > 1", "brackets"),
        ("avg(last_5m):a{q:x) > 1", "brackets"),
        ("avg(last_15m):max:a{q:x} / sum:c{q:x}.as_count() > 30", "'avg' time aggregator"),
        ("max(last_10m):sum:c{q:x}.as_count() > 0", "'max' time aggregator"),
        ("change(avg(last_5m),last_5m):sum:c{q:x}.as_count() > 0", "'avg' time aggregator"),
    ],
)
def test_rejected(query: str, expected: str) -> None:
    assert any(expected in p for p in problems(query)), problems(query)
