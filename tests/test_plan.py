"""The pure plan: matching by key, and diffs that ignore the server's known rewrites."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from sync.core.diff import FieldChange, diff
from sync.core.kinds import DASHBOARD, MONITOR, Kind
from sync.core.plan import Action, Live, make_plan
from sync.core.resources import Resource
from sync.definitions.model import Definitions
from sync.expand.desired import expand

BODY: dict[str, Any] = {
    "name": "[prod] critical: oldest message waiting too long",
    "type": "query alert",
    "query": "avg(last_10m):max:aws.sqs.approximate_age_of_oldest_message{queuename:prod-critical} > 30",
    "message": "text",
    "tags": ["env:prod", "managed-by:obs", "obs-key:prod/critical/age"],
    "priority": 1,
    "options": {"thresholds": {"critical": 30, "warning": 15}, "notify_no_data": False, "evaluation_delay": 900},
}


def _as_server_returns(body: dict[str, Any]) -> dict[str, Any]:
    """What the real API answers for a create (see the recorded exchanges): ids, defaults, floats, aliases."""
    live = copy.deepcopy(body)
    live.update(id=123, org_id=1, created="2026-11-30T12:00:00Z", overall_state="No Data", restricted_roles=None)
    live["type"] = "query alert"
    live["message"] = body["message"] + "\n"
    live["options"]["thresholds"] = {k: float(v) for k, v in body["options"]["thresholds"].items()}
    live["options"].update(silenced={}, notify_audit=False, include_tags=True, new_host_delay=300)
    live["tags"] = list(reversed(body["tags"]))
    return live


def test_server_rewrites_are_not_changes() -> None:
    assert diff(MONITOR, BODY, _as_server_returns(BODY)) == ()


@pytest.mark.parametrize(
    ("kind", "sent", "returned"),
    [
        (MONITOR, {"type": "metric alert"}, {"type": "query alert"}),
        (MONITOR, {"name": "x"}, {"name": "  x\n"}),
        (MONITOR, {"priority": None}, {}),
        (MONITOR, {"a": {"b": 2}}, {"a": {"b": 2.0}}),
        (
            DASHBOARD,
            {"widgets": [{"definition": {"type": "note"}}]},
            {"widgets": [{"id": 77, "definition": {"type": "note"}}]},
        ),
        (
            DASHBOARD,
            {"widgets": [{"definition": {"type": "group", "widgets": [{"definition": {"type": "note"}}]}}]},
            {
                "widgets": [
                    {"id": 1, "definition": {"type": "group", "widgets": [{"id": 2, "definition": {"type": "note"}}]}}
                ]
            },
        ),
    ],
)
def test_equivalent_forms(kind: Kind, sent: dict[str, Any], returned: dict[str, Any]) -> None:
    assert diff(kind, sent, returned) == ()


def test_changes_are_dotted_paths_old_to_new() -> None:
    live = _as_server_returns(BODY)
    live["options"]["thresholds"]["critical"] = 60.0
    live["query"] = live["query"].replace("> 30", "> 60")
    assert diff(MONITOR, BODY, live) == (
        FieldChange("options.thresholds.critical", 60.0, 30),
        FieldChange("query", live["query"], BODY["query"]),
    )


def test_a_removed_option_is_a_change() -> None:
    live = _as_server_returns(BODY)
    del live["options"]["evaluation_delay"]
    assert diff(MONITOR, BODY, live) == (FieldChange("options.evaluation_delay", None, 900),)


def test_a_tag_added_by_hand_is_drift() -> None:
    live = _as_server_returns(BODY)
    live["tags"].append("hand-made")
    assert [c.path for c in diff(MONITOR, BODY, live)] == ["tags"]


def test_plan_matches_by_key_and_leaves_unmanaged_alone(example: Definitions) -> None:
    desired = [r for r in expand(example, "prod") if r.kind == MONITOR][:3]
    same, changed, gone = desired
    OTHER_PRIORITY = changed.body["priority"] % 5 + 1
    live = [
        Live(MONITOR, "1", same.key, _as_server_returns(dict(same.body))),
        Live(
            MONITOR,
            "2",
            changed.key,
            {**_as_server_returns(dict(changed.body)), "priority": OTHER_PRIORITY},
        ),
        Live(MONITOR, "3", "prod/removed/age", {"name": "old"}),
        Live(MONITOR, "4", None, {"name": same.body["name"]}),
    ]
    plan = make_plan("prod", [same, changed, Resource(gone.kind, gone.key, gone.body, "prod")], live)
    actions = {c.key: c.action for c in plan.changes}
    assert actions == {
        same.key: Action.UNCHANGED,
        changed.key: Action.UPDATE,
        gone.key: Action.CREATE,
        "prod/removed/age": Action.DELETE,
    }
    assert [o.id for o in plan.unmanaged] == ["4"]
    assert plan.count() == {"create": 1, "update": 1, "delete": 1, "unchanged": 1, "unmanaged": 1}
    update = next(c for c in plan.changes if c.action == Action.UPDATE)
    assert update.fields == (FieldChange("priority", OTHER_PRIORITY, changed.body["priority"]),)


def _live(key: str | None, monitor_id: str, body: dict[str, Any], created: str = "", type_: str = "") -> Live:
    live = _as_server_returns(body)
    if type_:
        live["type"] = type_  # set after the server's own aliasing
    return Live(MONITOR, monitor_id, key, live, created)


def test_live_objects_of_other_environments_are_not_looked_at() -> None:
    resource = Resource(MONITOR, "prod/critical/age", BODY, "prod", "critical")
    plan = make_plan("prod", [resource], [_live("staging/critical/age", "9", BODY), _live("staging/x/y", "8", BODY)])
    assert [(c.action, c.key) for c in plan.changes] == [(Action.CREATE, "prod/critical/age")]


def test_of_two_objects_with_one_key_the_older_is_kept_and_the_newer_deleted() -> None:
    resource = Resource(MONITOR, "prod/critical/age", BODY, "prod", "critical")
    twins = [
        _live(resource.key, "20", BODY, "2026-11-30T10:00:00Z"),
        _live(resource.key, "30", BODY, "2026-11-01T00:00:00Z"),
    ]
    plan = make_plan("prod", [resource], twins)
    assert [(c.action, c.id) for c in plan.changes] == [(Action.DELETE, "20"), (Action.UNCHANGED, "30")]
    assert plan.changes[0].note == "duplicate of monitor 30, which is kept"
    assert plan.changes[0].duplicate_of == "30"


def test_a_second_object_that_differs_is_deleted_as_an_orphan_not_a_duplicate() -> None:
    resource = Resource(MONITOR, "prod/critical/age", BODY, "prod", "critical")
    clone = _live(resource.key, "40", {**BODY, "name": "[Clone] age"}, "2026-11-30T11:00:00Z")
    plan = make_plan("prod", [resource], [_live(resource.key, "30", BODY, "2026-11-01T00:00:00Z"), clone])
    delete = next(c for c in plan.changes if c.action == Action.DELETE)
    assert (delete.id, delete.duplicate_of) == ("40", None)
    assert "a copy made by hand?" in delete.note


def test_of_two_objects_with_one_key_the_one_of_the_right_type_is_kept() -> None:
    resource = Resource(MONITOR, "prod/critical/age", BODY, "prod", "critical")
    old = _live(resource.key, "30", BODY, "2026-11-01T00:00:00Z", type_="service check")
    new = _live(resource.key, "40", BODY, "2026-11-30T11:00:00Z")
    plan = make_plan("prod", [resource], [old, new])
    assert [(c.action, c.id) for c in plan.changes] == [(Action.DELETE, "30"), (Action.UNCHANGED, "40")]


def test_a_type_change_is_a_replacement() -> None:
    resource = Resource(MONITOR, "prod/critical/age", BODY, "prod", "critical")
    plan = make_plan("prod", [resource], [_live(resource.key, "7", BODY, type_="service check")])
    (change,) = plan.changes
    assert change.action == Action.UPDATE and change.replace and "new ID" in change.note


def test_adoption_takes_over_one_unmanaged_object_by_name_and_never_a_different_type() -> None:
    body = {**BODY, "tags": ["team:platform"]}
    same = Resource(MONITOR, "prod/critical/age", BODY, "prod", "critical")
    other_type = Resource(MONITOR, "prod/high/age", {**BODY, "name": "high"}, "prod", "high")
    ambiguous = Resource(MONITOR, "prod/low/age", {**BODY, "name": "low"}, "prod", "low")
    live = [
        _live(None, "1", body),
        _live(None, "2", {**body, "name": "high"}, type_="service check"),
        _live(None, "3", {**body, "name": "low"}),
        _live(None, "4", {**body, "name": "low"}),
    ]
    without = make_plan("prod", [same, other_type, ambiguous], live)
    assert [c.action for c in without.changes] == [Action.CREATE, Action.CREATE, Action.CREATE]
    assert [o.id for o in without.unmanaged] == ["1", "2", "3", "4"]
    plan = make_plan("prod", [same, other_type, ambiguous], live, adopt=True)
    actions = {c.key: (c.action, c.id) for c in plan.changes}
    assert actions == {
        same.key: (Action.UPDATE, "1"),
        other_type.key: (Action.CREATE, None),
        ambiguous.key: (Action.CREATE, None),
    }
    adopted = next(c for c in plan.changes if c.id == "1")
    assert adopted.note == "adopts unmanaged monitor 1, keeping its ID"
    assert [f.path for f in adopted.fields] == ["tags"]
    assert [o.id for o in plan.unmanaged] == ["2", "3", "4"]


@pytest.mark.parametrize(
    ("live_extra", "path"),
    [
        (
            {"options": {"thresholds": {"critical": 30.0, "warning": 15.0, "critical_recovery": 20.0}}},
            "options.thresholds.critical_recovery",
        ),
        ({"options": {"renotify_interval": 60}}, "options.renotify_interval"),
        ({"priority": 3}, "priority"),
    ],
)
def test_a_setting_removed_from_the_definitions_is_a_change(live_extra: dict[str, Any], path: str) -> None:
    desired = copy.deepcopy(BODY)
    desired.pop("priority")
    live = _as_server_returns(desired)
    for key, value in live_extra.items():
        live[key] = {**live[key], **value} if isinstance(value, dict) else value
    assert [(f.path, f.new) for f in diff(MONITOR, desired, live)] == [(path, None)]


def test_a_widget_setting_removed_from_the_template_is_a_change() -> None:
    desired = {"widgets": [{"definition": {"type": "note", "content": "x"}}]}
    live = {"widgets": [{"id": 5, "definition": {"type": "note", "content": "x", "font_size": "16"}}]}
    assert diff(DASHBOARD, desired, live) == (FieldChange("widgets[0].definition.font_size", "16", None),)


def test_a_dashboard_layout_change_is_a_replacement() -> None:
    body = {"title": "t", "layout_type": "ordered", "widgets": []}
    resource = Resource(DASHBOARD, "prod/oncall", body, "prod")
    plan = make_plan(
        "prod", [resource], [Live(DASHBOARD, "abc-def-ghi", resource.key, {**body, "layout_type": "free"})]
    )
    (change,) = plan.changes
    assert change.replace and change.note.startswith("its layout_type cannot change in place")
