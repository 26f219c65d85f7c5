"""Queue SLOs end to end: the real CLI and datadog-api-client against the fake Datadog on 127.0.0.1."""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path
from typing import Any

import pytest
from datadog_api_client import ApiClient, Configuration
from datadog_api_client.exceptions import ApiException
from datadog_api_client.v1.api.service_level_objectives_api import ServiceLevelObjectivesApi

from sync.check import models
from sync.core.kinds import SLO
from sync.datadog.client import Datadog, RequestFailed
from sync.datadog.credentials import Endpoint
from sync.definitions.load import load
from sync.definitions.model import Definitions
from sync.definitions.slo import slo_settings
from sync.errors import ObsError
from sync.expand.desired import expand

from .conftest import Obs, desired
from .fakedd import FakeDatadog, Rejected

SLO_KEYS = {f"prod/{q}/slo" for q in ("critical", "high", "default")}
BURN_KEYS = {f"prod/{q}/slo-{b}-burn" for q in ("critical", "high", "default") for b in ("fast", "slow")}


def tagged_key(body: dict[str, Any]) -> str:
    (key,) = [str(t).removeprefix("obs-key:") for t in body["tags"] if str(t).startswith("obs-key:")]
    return key


def slo_ids(dd: FakeDatadog) -> dict[str, str]:
    return {tagged_key(s): slo_id for slo_id, s in dd.slos.items() if "managed-by:obs" in s["tags"]}


def pending(plan: dict[str, Any]) -> dict[str, str]:
    return {c["key"]: c["action"] for c in plan["changes"] if c["action"] != "unchanged"}


def test_sync_creates_slos_then_monitors_and_dashboard_with_their_real_ids(obs: Obs, dd: FakeDatadog) -> None:
    assert obs("sync", "--env", "prod") == 0, obs.err
    assert f"Applied: {desired(obs.definitions, 'prod')} created, 0 updated, 0 deleted, 0 failed" in obs.out
    ids = slo_ids(dd)
    assert ids.keys() == SLO_KEYS
    critical = dd.slos[ids["prod/critical/slo"]]
    assert critical["type"] == "time_slice" and critical["type_id"] == 2
    condition = critical["sli_specification"]["time_slice"]
    assert condition["comparator"] == "<=" and condition["threshold"] == 30.0
    assert condition["query"]["queries"][0]["query"] == (
        "max:aws.sqs.approximate_age_of_oldest_message{queuename:prod-critical,region:us-east-1}"
    )
    assert [(t["timeframe"], t["target"]) for t in critical["thresholds"]] == [("30d", 99.5), ("7d", 99.5)]

    burns = {tagged_key(m): m for m in dd.monitors.values() if m["type"] == "slo alert"}
    assert burns.keys() == BURN_KEYS
    fast = burns["prod/critical/slo-fast-burn"]
    assert fast["query"] == (
        f'burn_rate("{ids["prod/critical/slo"]}").over("30d").long_window("1h").short_window("30m") > 36'
    )
    assert "{{#is_alert}}@pagerduty-jobs-platform{{/is_alert}}" in fast["message"]
    slow = burns["prod/critical/slo-slow-burn"]
    assert "@slack-jobs-alerts" in slow["message"] and "@pagerduty" not in slow["message"]
    assert "${" not in json.dumps(list(dd.monitors.values()))

    (board,) = dd.dashboards.values()
    shown = re.findall(r'"slo_id": "([^"]+)"', json.dumps(board["widgets"]))
    assert sorted(shown) == sorted(ids.values())

    dd.reset_log()
    assert obs("plan", "--env", "prod", "--detailed-exitcode") == 0, obs.out
    assert (
        f"Plan: 0 to create, 0 to update, 0 to delete, {desired(obs.definitions, 'prod')} unchanged, 0 unmanaged."
        in obs.out
    )
    assert dd.calls("GET", "/api/v1/slo") - dd.calls("GET", "/api/v1/slo/correction") == 1


def test_a_target_changed_in_yaml_updates_the_slo_in_place(obs: Obs, dd: FakeDatadog) -> None:
    obs("sync", "--env", "prod")
    before = slo_ids(dd)
    inventory = obs.definitions / "queues.yaml"
    inventory.write_text(inventory.read_text().replace("target: 99.5", "target: 99.9"))
    plan = obs.plan()
    # The SLOs, and the burn-rate messages that state the target.
    assert pending(plan) == {key: "update" for key in SLO_KEYS | BURN_KEYS}
    (change,) = [c for c in plan["changes"] if c["key"] == "prod/critical/slo"]
    assert {f["path"] for f in change["fields"]} == {"target_threshold", "thresholds[0].target", "thresholds[1].target"}
    assert obs("sync", "--env", "prod") == 0, obs.err
    assert slo_ids(dd) == before
    assert dd.slos[before["prod/critical/slo"]]["target_threshold"] == 99.9
    assert pending(obs.plan()) == {}


def test_an_slo_edited_by_hand_is_drift_that_the_next_sync_reverts(obs: Obs, dd: FakeDatadog) -> None:
    obs("sync", "--env", "prod")
    slo_id = slo_ids(dd)["prod/high/slo"]
    edited = {k: v for k, v in dd.slos[slo_id].items() if k not in ("id", "created_at", "modified_at", "creator")}
    edited["sli_specification"]["time_slice"]["threshold"] = 600
    dd.slos[slo_id].update(edited)
    assert pending(obs.plan()) == {"prod/high/slo": "update"}
    assert obs("sync", "--env", "prod") == 0, obs.err
    assert dd.slos[slo_id]["sli_specification"]["time_slice"]["threshold"] == 120.0


def test_a_removed_slo_is_deleted_after_the_monitors_and_widget_that_refer_to_it(obs: Obs, dd: FakeDatadog) -> None:
    obs("sync", "--env", "prod")
    removed = slo_ids(dd)["prod/default/slo"]
    inventory = obs.definitions / "queues.yaml"
    inventory.write_text(inventory.read_text().replace("    slo_seconds: 300\n", ""))
    # The default queue's age monitor needs slo_seconds on short queues: move it to the feature class.
    inventory.write_text(
        inventory.read_text().replace("  - name: default\n    class: short", "  - name: default\n    class: feature")
    )
    plan = obs.plan()
    assert (
        pending(plan).items()
        >= {
            "prod/default/slo": "delete",
            "prod/default/slo-fast-burn": "delete",
            "prod/default/slo-slow-burn": "delete",
            "prod/oncall": "update",
            # The nightly window's correction of that SLO goes first: it names the SLO by ID.
            "prod/default/slo/maintenance/nightly-migrations": "delete",
        }.items()
    )
    dd.reset_log()
    assert obs("sync", "--env", "prod", "--max-deletes", "16") == 0, obs.err
    assert removed not in dd.slos and slo_ids(dd).keys() == SLO_KEYS - {"prod/default/slo"}
    assert all(removed not in m["query"] for m in dd.monitors.values())
    assert dd.corrections == {}
    deletes = [(r.path.rsplit("/", 1)[0], r.status) for r in dd.log if r.method == "DELETE" and "/slo/" in r.path]
    assert deletes == [("/api/v1/slo/correction", 204), ("/api/v1/slo", 200)]
    assert pending(obs.plan()) == {}


def test_the_fake_refuses_to_delete_an_slo_a_monitor_alerts_on(obs: Obs, dd: FakeDatadog) -> None:
    obs("sync", "--env", "prod")
    slo_id = slo_ids(dd)["prod/critical/slo"]
    client = Datadog(Endpoint(dd.url, dd.api_key, dd.app_key))
    try:
        with pytest.raises(RequestFailed) as refused:
            client.delete(SLO, slo_id)
    finally:
        client.close()
    assert refused.value.status == 409 and "referenced by monitor" in refused.value.detail
    assert slo_id in dd.slos


def test_a_hand_made_slo_is_untouched(obs: Obs, dd: FakeDatadog) -> None:
    mine = dd.create_slo(
        {
            "name": "[prod] critical: jobs start within 30 s",
            "type": "time_slice",
            "sli_specification": {
                "time_slice": {
                    "comparator": "<",
                    "threshold": 10,
                    "query": {
                        "formulas": [{"formula": "q"}],
                        "queries": [{"data_source": "metrics", "name": "q", "query": "avg:my.metric{*}"}],
                    },
                }
            },
            "thresholds": [{"timeframe": "7d", "target": 99}],
            "tags": ["env:prod", "team:mine"],
        }
    )
    snapshot = json.dumps(mine, sort_keys=True)
    assert obs("sync", "--env", "prod") == 0, obs.err
    assert json.dumps(dd.slos[mine["id"]], sort_keys=True) == snapshot
    assert len(slo_ids(dd)) == 3 and len(dd.slos) == 4
    assert obs("sync", "--env", "prod") == 0
    assert json.dumps(dd.slos[mine["id"]], sort_keys=True) == snapshot


def test_the_fake_checks_slo_bodies_against_the_spec(dd: FakeDatadog) -> None:
    query = {"formulas": [{"formula": "a"}], "queries": [{"data_source": "metrics", "name": "a", "query": "max:m{*}"}]}
    good: dict[str, Any] = {
        "name": "x",
        "type": "time_slice",
        "thresholds": [{"timeframe": "30d", "target": 99.5}],
        "sli_specification": {
            "time_slice": {
                "comparator": "<=",
                "threshold": 1,
                "query": query,
            }
        },
    }
    created = dd.create_slo(good)
    assert isinstance(created["id"], str) and created["creator"]["email"] and created["type_id"] == 2
    assert created["sli_specification"]["time_slice"]["query_interval_seconds"] == 300  # the spec's default
    assert created["thresholds"][0]["target_display"] and created["target_threshold"] == 99.5
    assert created["description"] is None
    for bad in (
        {**good, "thresholds": [{"timeframe": "1d", "target": 99.5}]},
        {**good, "thresholds": [{"timeframe": "30d", "target": 100}]},
        {**good, "unknown": 1},
        {
            **good,
            "sli_specification": {
                "time_slice": {
                    "comparator": "=",
                    "threshold": 1,
                    "query": query,
                }
            },
        },
        {k: v for k, v in good.items() if k != "thresholds"},
        {**good, "id": "abc"},
    ):
        with pytest.raises(Rejected):
            dd.create_slo(bad)


def test_an_slo_alert_naming_no_slo_is_refused(dd: FakeDatadog) -> None:
    with pytest.raises(Rejected):
        dd.create_monitor(
            {
                "name": "x",
                "type": "slo alert",
                "query": 'burn_rate("${slo_id:prod/x/slo}").over("30d").long_window("1h").short_window("5m") > 14.4',
                "options": {"thresholds": {"critical": 14.4}},
            }
        )


def test_a_default_audience_an_environment_lacks_notifies_nobody_there(example_copy: Path) -> None:
    inventory = example_copy / "queues.yaml"
    text = inventory.read_text()
    inventory.write_text(text[: text.index("    slo:\n")] + text[text.index("  long:\n") :])  # defaults only
    defs = load(example_copy)
    chat_only = dataclasses.replace(defs.environment("prod"), notify={"chat": ("@slack-jobs-alerts",)})
    settings = slo_settings(defs, chat_only, "short")
    assert {b.name: b.audience for b in settings.burns} == {"fast_burn": "none", "slow_burn": "chat"}
    assert settings.target == 99.5 and settings.timeframes == ("30d", "7d")


def test_an_audience_named_on_purpose_must_exist(example: Definitions) -> None:
    chat_only = dataclasses.replace(example.environment("prod"), notify={"chat": ("@slack-jobs-alerts",)})
    with pytest.raises(ObsError, match=r"queues.yaml:15: .*audience 'page' is not declared in environments/prod"):
        slo_settings(example, chat_only, "short")


def test_environment_settings_win_over_the_class(example: Definitions) -> None:
    staging = {r.key: r.body for r in expand(example, "staging")}
    assert [t["timeframe"] for t in staging["staging/critical/slo"]["thresholds"]] == ["7d"]
    fast = staging["staging/critical/slo-fast-burn"]
    assert '.over("7d")' in fast["query"] and "{{#is_alert}}@slack-jobs-staging{{/is_alert}}" in fast["message"]
    assert not [r for r in expand(example, "dev") if r.kind == SLO]  # dev turns its SLOs off


def test_a_queue_without_slo_seconds_has_no_slo(example: Definitions) -> None:
    keys = {r.key for r in expand(example, "prod") if r.kind == SLO}
    assert keys == SLO_KEYS  # low, introduction and reindexing declare no slo_seconds


def test_a_metric_may_leave_its_page_to_the_burn_rate_alert(example_copy: Path) -> None:
    prod = {r.key: r.body for r in expand(load(example_copy), "prod")}
    age = prod["prod/critical/age"]["message"]
    assert "{{#is_alert}}@slack-jobs-alerts{{/is_alert}}" in age and "@pagerduty" not in age
    assert "{{#is_alert}}@pagerduty-jobs-platform{{/is_alert}}" in prod["prod/critical/slo-fast-burn"]["message"]
    assert "@pagerduty" in prod["prod/introduction/age"]["message"]  # no SLO there: the static page stays

    environment = example_copy / "environments" / "prod.yaml"
    environment.write_text(environment.read_text() + "slo: {fast_burn: {notify: none}}\n")
    prod = {r.key: r.body for r in expand(load(example_copy), "prod")}
    assert "{{#is_alert}}@pagerduty-jobs-platform{{/is_alert}}" in prod["prod/critical/age"]["message"]
    assert "{{#is_alert}}" not in prod["prod/critical/slo-fast-burn"]["message"]


def test_a_removed_slo_warning_is_a_change_and_goes_away(obs: Obs, dd: FakeDatadog) -> None:
    inventory = obs.definitions / "queues.yaml"
    original = inventory.read_text()
    inventory.write_text(original.replace("      target: 99.5\n", "      target: 99.5\n      warning: 99.8\n"))
    assert obs("sync", "--env", "prod") == 0, obs.err
    slo_id = slo_ids(dd)["prod/critical/slo"]
    assert dd.slos[slo_id]["warning_threshold"] == 99.8 and dd.slos[slo_id]["thresholds"][0]["warning"] == 99.8
    assert pending(obs.plan()) == {}
    inventory.write_text(original)
    plan = obs.plan()
    assert pending(plan) == {key: "update" for key in SLO_KEYS}
    (change,) = [c for c in plan["changes"] if c["key"] == "prod/critical/slo"]
    assert {f["path"] for f in change["fields"]} == {
        "warning_threshold",
        "thresholds[0].warning",
        "thresholds[1].warning",
    }
    assert obs("sync", "--env", "prod") == 0, obs.err
    assert "warning_threshold" not in dd.slos[slo_id] and "warning" not in dd.slos[slo_id]["thresholds"][0]
    assert pending(obs.plan()) == {}


def test_obs_links_gives_each_queue_its_slo_page_with_the_live_id(obs: Obs, dd: FakeDatadog) -> None:
    assert obs("sync", "--env", "prod") == 0, obs.err
    assert obs("links", "--env", "prod", "--queue", "critical", "--format", "json") == 0, obs.err
    (queue,) = json.loads(obs.out)["queues"]
    links = {link["label"]: link["url"] for link in queue["links"]}
    assert links["SLO"] == f"https://app.datadoghq.com/slo/manage?slo_id={slo_ids(dd)['prod/critical/slo']}"
    assert obs("links", "--env", "prod", "--queue", "low", "--format", "json") == 0
    assert "SLO" not in {link["label"] for link in json.loads(obs.out)["queues"][0]["links"]}


def test_the_model_check_covers_slo_bodies(example: Definitions) -> None:
    (body,) = [r.body for r in expand(example, "prod") if r.key == "prod/critical/slo"]
    assert models.problems(SLO, body) == []
    assert models.problems(SLO, {**body, "frobnicate": 1}) == ["frobnicate: unknown key"]
    bad = json.loads(json.dumps(body))
    bad["sli_specification"]["time_slice"]["comparator"] = "=="
    assert models.problems(SLO, bad) != []
    assert models.problems(SLO, {**body, "thresholds": [{"timeframe": "14d", "target": 99}]}) != []


def test_the_fake_lists_slos_with_the_api_filters_and_pages(obs: Obs, dd: FakeDatadog) -> None:
    assert obs("sync", "--env", "prod") == 0, obs.err
    obs("sync", "--env", "staging")
    config = Configuration(host=dd.url, api_key={"apiKeyAuth": dd.api_key, "appKeyAuth": dd.app_key})  # type: ignore[no-untyped-call]
    with ApiClient(config) as client:
        api = ServiceLevelObjectivesApi(client)  # type: ignore[no-untyped-call]
        ours = api.list_slos(tags_query="env:prod").data
        assert sorted(tagged_key(s.to_dict()) for s in ours) == sorted(SLO_KEYS)
        assert len(api.list_slos(tags_query="managed-by:obs").data) == 6
        first, second = api.list_slos(limit=4, offset=0).data, api.list_slos(limit=4, offset=4).data
        assert len(first) == 4 and len(second) == 2 and not {s.id for s in first} & {s.id for s in second}
        (one,) = api.list_slos(ids=ours[0].id).data
        assert one.id == ours[0].id and api.get_slo(ours[0].id).data.id == ours[0].id
        assert api.list_slos(query="critical", tags_query="env:prod").data[0].name == (
            "[prod] critical: jobs start within 30 s"
        )
        with pytest.raises(ApiException) as refused:
            api.list_slos(limit=5000)
        assert refused.value.status == 400
