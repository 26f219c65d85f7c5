"""Real Datadog exchanges (copied from recorded API sessions into tests/fixtures/recorded): the bodies the
real API accepted pass our model check, and what it answered to a create is no change to our diff."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from sync.check import models
from sync.core import kinds
from sync.core.diff import diff
from sync.core.kinds import DASHBOARD, MONITOR, Kind
from sync.core.resources import Resource

RECORDED = sorted((Path(__file__).parent / "fixtures" / "recorded").glob("*.json"))


def _load(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(path.read_text())
    return data


CREATES = [p for p in RECORDED if _load(p)["method"] == "POST" and _load(p)["status"] == 200]


@pytest.mark.parametrize("path", CREATES, ids=[p.stem for p in CREATES])
def test_accepted_bodies_pass_the_model_check(path: Path) -> None:
    exchange = _load(path)
    assert models.problems(kinds.named(exchange["kind"]), exchange["request"]) == []


@pytest.mark.parametrize("path", CREATES, ids=[p.stem for p in CREATES])
def test_a_create_response_is_no_change(path: Path) -> None:
    exchange = _load(path)
    assert diff(kinds.named(exchange["kind"]), exchange["request"], exchange["response"]) == ()


def test_the_recordings_cover_the_server_rewrites() -> None:
    """The fixtures hold the rewrites the diff must ignore; if one went missing the test above would prove less."""
    pairs = [(_load(p)["request"], _load(p)["response"]) for p in CREATES]
    seen = {
        "metric alert -> query alert": any(
            q.get("type") == "metric alert" and r["type"] == "query alert" for q, r in pairs
        ),
        "trimmed text": any(q.get("message", "") != q.get("message", "").strip() for q, r in pairs),
        "int -> float": any(
            isinstance(r.get("options", {}).get("thresholds", {}).get("critical"), float) for q, r in pairs
        ),
        "priority 0 -> null": any(q.get("priority") == 0 and r.get("priority") is None for q, r in pairs),
        "widget ids": any("id" in w for q, r in pairs for w in r.get("widgets", [])),
        "server defaults": any("silenced" in r.get("options", {}) for q, r in pairs),
    }
    assert all(seen.values()), seen


@pytest.mark.parametrize(
    ("kind", "body", "expected"),
    [
        (MONITOR, {"type": "query alert", "query": "q", "frobnicate": 1}, "frobnicate: unknown key"),
        (
            MONITOR,
            {"type": "query alert", "query": "q", "options": {"threshods": {}}},
            "options.threshods: unknown key",
        ),
        (MONITOR, {"type": "bogus alert", "query": "q"}, "type: 'bogus alert' is not an allowed value"),
        (
            MONITOR,
            {"type": "query alert", "query": "q", "options": {"thresholds": {"critical": "high"}}},
            "Invalid type",
        ),
        (MONITOR, {"type": "query alert"}, "missing 1 required positional argument: 'query'"),
        (
            DASHBOARD,
            {"title": "t", "layout_type": "grid", "widgets": []},
            "layout_type: 'grid' is not an allowed value",
        ),
        (
            DASHBOARD,
            {
                "title": "t",
                "layout_type": "ordered",
                "widgets": [{"definition": {"type": "note", "content": "x", "colour": 1}}],
            },
            "widgets[0].definition.colour: unknown key",
        ),
        (
            DASHBOARD,
            {"title": "t", "layout_type": "ordered", "widgets": [{"definition": {"type": "pie", "content": "x"}}]},
            "widgets[0].definition: matches no shape",
        ),
    ],
)
def test_the_model_check_rejects_what_the_api_would(kind: Kind, body: dict[str, Any], expected: str) -> None:
    found = models.problems(kind, body)
    assert any(expected in p for p in found), found


def test_monitors_of_one_shape_share_a_check_but_each_is_named() -> None:
    good = {"type": "query alert", "query": "avg(last_5m):a{q:x} > 1", "options": {"thresholds": {"critical": 1}}}
    bad = {**good, "options": {"thresholds": {"critical": 2}, "evaluation_dela": 900}}
    resources = [
        Resource(MONITOR, "prod/a/age", good, "prod"),
        Resource(MONITOR, "prod/b/age", {**good, "query": "avg(last_5m):a{q:y} > 1"}, "prod"),
        Resource(MONITOR, "prod/c/age", bad, "prod"),
        Resource(MONITOR, "prod/d/age", {**bad, "query": "other"}, "prod"),
    ]
    assert [(r.key, problem) for r, problem in models.rejected(resources)] == [
        ("prod/c/age", ("options.evaluation_dela", "unknown key")),
        ("prod/d/age", ("options.evaluation_dela", "unknown key")),
    ]


def test_widgets_of_one_shape_share_a_check_but_each_is_named_and_other_values_are_checked_each() -> None:
    """Widgets that differ only in text (one per queue, in a group) share a check; one that differs in any other
    value (here an enum) is checked on its own."""

    def timeseries(queue: str, display: str = "line", extra: dict[str, Any] | None = None) -> dict[str, Any]:
        request = {"q": f"avg:aws.sqs.depth{{queuename:{queue}}}", "display_type": display}
        return {"definition": {"type": "timeseries", "title": f"{queue} depth", "requests": [request], **(extra or {})}}

    inner = [
        timeseries("a", extra={"colour": "red"}),
        timeseries("b"),
        timeseries("c", extra={"colour": "blue"}),
        timeseries("d", display="lines"),
    ]
    group = {"definition": {"type": "group", "title": "queues", "layout_type": "ordered", "widgets": inner}}
    body = {"title": "t", "layout_type": "ordered", "widgets": [group]}
    found = [problem for _, problem in models.rejected([Resource(DASHBOARD, "prod/oncall", body, "prod")])]
    at = "widgets[0].definition.widgets"
    assert found[:2] == [(f"{at}[0].definition.colour", "unknown key"), (f"{at}[2].definition.colour", "unknown key")]
    assert [path for path, _ in found[2:]] and all(path.startswith(f"{at}[3].") for path, _ in found[2:]), found


def test_a_long_dashboard_is_checked_whole_where_it_matters() -> None:
    """Long text and long lists of names are cut before the check, for speed; every widget is still checked,
    and text is cut only past every length limit the models set."""
    note = {"definition": {"type": "note", "content": "x" * 300_000}}
    widgets = [note] * 700 + [{"definition": {"type": "note", "content": "x", "colour": "red"}}]
    variables = [{"name": "queue", "prefix": "queuename", "available_values": [f"q{i}" for i in range(5000)]}]
    body = {"title": "t", "layout_type": "ordered", "widgets": widgets, "template_variables": variables}
    found = models.rejected([Resource(DASHBOARD, "prod/oncall", body, "prod")])
    assert [problem for _, problem in found] == [("widgets[700].definition.colour", "unknown key")]
