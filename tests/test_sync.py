"""obs plan and obs sync end to end: the real CLI and datadog-api-client against the fake Datadog on 127.0.0.1."""

from __future__ import annotations

import json
import os
import re
import time
from collections import Counter
from collections.abc import Mapping, Sequence
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest

from sync.core.kinds import KINDS, Kind
from sync.core.resources import Resource
from sync.datadog import apply, listing, reads
from sync.datadog.client import Datadog, RequestFailed
from sync.datadog.credentials import Endpoint, endpoint
from sync.definitions.load import load
from sync.definitions.model import Definitions
from sync.expand.desired import expand
from sync.report import changes as report

from .conftest import Obs, desired
from .fakedd import LATE_COMMIT, LOST, LOST_RESPONSE, TIMED_OUT, FakeDatadog, Targeted
from .test_diff import generated_queues

KEY = re.compile(r"^obs-key:(.+)$")


def keys(dd: FakeDatadog) -> Counter[str]:
    """Managed keys in the fake, with how many live objects carry each."""
    found: Counter[str] = Counter()
    for tagged in [*dd.monitors.values(), *dd.slos.values()]:
        found.update(m.group(1) for tag in tagged["tags"] if (m := KEY.match(tag)))
    described = [*dd.dashboards.values(), *(c["attributes"] for c in dd.corrections.values())]
    for item in described:
        found.update(
            line.split("obs-key:")[1] for line in (item["description"] or "").splitlines() if "obs-key:" in line
        )
    return found


def changes(plan: dict[str, Any]) -> dict[str, str]:
    return {c["key"]: c["action"] for c in plan["changes"] if c["action"] != "unchanged"}


def test_sync_into_an_empty_org_then_plan_shows_no_changes(obs: Obs, dd: FakeDatadog) -> None:
    assert obs("sync", "--env", "prod") == 0, obs.err
    assert f"Applied: {desired(obs.definitions, 'prod')} created, 0 updated, 0 deleted, 0 failed" in obs.out
    # 97 query monitors and 6 SLO burn-rate monitors, 17 composites; 3 SLOs, 1 dashboard and 10 downtimes.
    assert len(dd.monitors) == desired(obs.definitions, "prod", kinds=("monitor", "composite"))
    assert len(dd.dashboards) == desired(obs.definitions, "prod", kinds=("dashboard",))
    assert len(dd.downtimes) == desired(obs.definitions, "prod", kinds=("downtime",))
    assert len(dd.slos) == desired(obs.definitions, "prod", kinds=("slo",))
    keyed = desired(obs.definitions, "prod") - len(dd.downtimes)  # downtimes carry no key tag
    assert all(n == 1 for n in keys(dd).values()) and len(keys(dd)) == keyed

    dd.reset_log()
    assert obs("plan", "--env", "prod", "--detailed-exitcode", "--verbose") == 0, obs.out
    assert (
        f"Plan: 0 to create, 0 to update, 0 to delete, {desired(obs.definitions, 'prod')} unchanged, 0 unmanaged."
        in obs.out
    )
    # One SLO, one SLO-correction, one monitor (composites too), one dashboard summary and one downtime page
    # (short: the end), and the one dashboard.
    assert dd.calls() == 6
    assert "API calls: 6 (" in obs.err


def test_composites_are_written_after_the_monitors_they_combine_with_their_real_ids(obs: Obs, dd: FakeDatadog) -> None:
    assert obs("sync", "--env", "prod") == 0, obs.err
    key_of = {i: found.group(1) for i, m in dd.monitors.items() for t in m["tags"] if (found := KEY.match(t))}
    composites = {key_of[i]: m for i, m in dd.monitors.items() if m["type"] == "composite"}
    assert len(composites) == 17
    capped = composites["prod/critical/workers_capped"]["query"]
    ids = [int(found) for found in re.findall(r"\d+", capped)]
    assert capped == f"{ids[0]} && {ids[1]}" and "$" not in capped
    assert [key_of[i] for i in ids] == ["prod/critical/workers_at_max", "prod/critical/age"]
    assert all(dd.monitors[i]["type"] == "query alert" for i in ids)


def test_removing_a_composite_and_a_monitor_it_uses_deletes_the_composite_first(obs: Obs, dd: FakeDatadog) -> None:
    obs("sync", "--env", "prod")
    # no_running_tasks is half of two composites: both go with it.
    gone = ("scale_from_zero_failed", "workers_not_starting", "no_running_tasks")
    for metric in gone:
        (obs.definitions / "monitors" / f"{metric}.yaml").unlink()
    plan = obs.plan()
    assert changes(plan) == {
        f"prod/{queue}/{metric}": "delete" for queue in ("introduction", "reindexing") for metric in gone
    }
    # The API refuses to delete a monitor a composite still uses: the composites must go first.
    assert obs("sync", "--env", "prod") == 0, obs.out + obs.err
    assert "Applied: 0 created, 0 updated, 6 deleted, 0 failed" in obs.out
    assert not any(k.endswith(tuple(f"/{metric}" for metric in gone)) for k in keys(dd))
    assert changes(obs.plan()) == {}


def test_the_plan_reads_monitors_a_thousand_per_call_not_one_per_monitor(obs: Obs, dd: FakeDatadog) -> None:
    obs("sync", "--env", "prod")
    dd.reset_log()
    obs.plan()
    # 120 monitors and composites: a short page, so no empty page after it; both kinds share the read.
    assert dd.calls("GET", "/api/v1/monitor") == 1
    assert dd.calls("GET", "/api/v1/dashboard/") == 1


def test_a_threshold_changed_in_yaml_shows_exactly_that_change(obs: Obs, dd: FakeDatadog) -> None:
    obs("sync", "--env", "prod")
    prod = obs.definitions / "environments" / "prod.yaml"
    prod.write_text(prod.read_text().replace("critical: 21600, warning: 10800", "critical: 25200, warning: 10800"))
    plan = obs.plan()
    assert changes(plan) == {"prod/reindexing/age": "update"}
    (change,) = [c for c in plan["changes"] if c["action"] == "update"]
    fields = {f["path"]: (f["old"], f["new"]) for f in change["fields"]}
    assert fields.keys() == {"options.thresholds.critical", "query", "message"}  # one number, said three times
    assert fields["options.thresholds.critical"] == (21600.0, 25200)
    old_query, new_query = fields["query"]
    assert old_query.endswith("> 21600") and new_query == old_query.replace("> 21600", "> 25200")
    assert obs("sync", "--env", "prod") == 0
    assert "Applied: 0 created, 1 updated, 0 deleted, 0 failed" in obs.out
    assert changes(obs.plan()) == {}


def test_an_edit_in_the_ui_is_drift_and_the_next_sync_reverts_it(obs: Obs, dd: FakeDatadog) -> None:
    obs("sync", "--env", "prod")
    monitor_id, monitor = next((i, m) for i, m in dd.monitors.items() if "obs-key:prod/critical/age" in m["tags"])
    # Someone raises the threshold by hand and renotifies the chat alert; a PUT from the UI replaces options,
    # so they send them all.
    options = {**monitor["options"], "thresholds": {"critical": 180.0, "warning": 30.0}, "renotify_interval": 30}
    dd.update_monitor(monitor_id, {"query": monitor["query"].replace("> 90", "> 180"), "options": options})
    plan = obs.plan()
    assert changes(plan) == {"prod/critical/age": "update"}
    (change,) = [c for c in plan["changes"] if c["action"] == "update"]
    assert {f["path"] for f in change["fields"]} == {
        "options.thresholds.critical",
        "options.renotify_interval",
        "query",
    }
    assert obs("sync", "--env", "prod") == 0
    assert dd.monitors[monitor_id]["options"]["thresholds"]["critical"] == 90.0
    assert "renotify_interval" not in dd.monitors[monitor_id]["options"]  # it goes to chat: no renotify
    assert changes(obs.plan()) == {}


def test_options_are_sent_complete_on_update(obs: Obs, dd: FakeDatadog) -> None:
    """The server replaces options wholesale: an update that sent only the changed key would drop the rest."""
    obs("sync", "--env", "prod")
    monitor_id = next(i for i, m in dd.monitors.items() if "obs-key:prod/critical/age" in m["tags"])
    dd.update_monitor(monitor_id, {"options": {"thresholds": {"critical": 90}}})  # the rest of options is gone
    obs("sync", "--env", "prod")
    assert dd.monitors[monitor_id]["options"]["evaluation_delay"] == 900
    assert changes(obs.plan()) == {}


def test_an_unmanaged_monitor_with_the_same_name_stays_untouched(obs: Obs, dd: FakeDatadog) -> None:
    obs("sync", "--env", "prod")
    ours = next(m for m in dd.monitors.values() if "obs-key:prod/critical/age" in m["tags"])
    theirs = dd.create_monitor(
        {"name": ours["name"], "type": "query alert", "query": ours["query"], "tags": ["team:x"]}
    )
    before = dict(dd.monitors[theirs["id"]])
    assert obs("sync", "--env", "prod") == 0
    assert "Nothing to do." in obs.out
    assert dd.monitors[theirs["id"]] == before


def without_windows(definitions: Path) -> None:
    """The example without prod's maintenance window, which names queues these tests remove."""
    prod = definitions / "environments" / "prod.yaml"
    text = prod.read_text()
    prod.write_text(text[: text.index("# Nightly database migrations")])


def test_removing_a_queue_deletes_only_its_monitors_in_that_environment(obs: Obs, dd: FakeDatadog) -> None:
    without_windows(obs.definitions)
    obs("sync", "--env", "prod")
    obs("sync", "--env", "staging")
    before = keys(dd)
    queues = obs.definitions / "queues.yaml"
    text = queues.read_text()
    start = text.index("  - name: low\n")
    queues.write_text(text[:start] + text[text.index("  - name: introduction\n") :])
    plan = obs.plan()
    deleted = {key for key, action in changes(plan).items() if action == "delete"}
    assert deleted == {key for key in before if key.startswith("prod/low/")} and deleted
    assert changes(plan).keys() - deleted == {"prod/oncall"}  # the dashboard no longer shows the queue
    # A queue has more monitors and composites than the mass-delete guard lets go by default.
    assert obs("sync", "--env", "prod", "--max-deletes", str(len(deleted))) == 0, obs.out + obs.err
    after = keys(dd)
    assert set(before) - set(after) == {k for k in before if k.startswith("prod/low/")}
    assert any(k.startswith("staging/low/") for k in after)


def test_the_mass_delete_guard_trips_and_nothing_is_deleted(obs: Obs, dd: FakeDatadog) -> None:
    without_windows(obs.definitions)
    obs("sync", "--env", "prod")
    before = keys(dd)
    queues = obs.definitions / "queues.yaml"
    text = queues.read_text()
    queues.write_text(text[: text.index("  - name: default\n")] + text[text.index("  - name: reindexing\n") :])
    doomed = sum(key.split("/")[1] in ("default", "low", "introduction") for key in before)
    assert doomed > 10
    assert obs("sync", "--env", "prod") == 1
    assert f"refusing to delete {doomed} of the 124 objects obs manages in 'prod' (the limit is 13)" in obs.err
    assert "--allow-mass-delete" in obs.err
    assert keys(dd) == before
    assert obs("sync", "--env", "prod", "--max-deletes", str(doomed)) == 0
    assert len(keys(dd)) == 124 - doomed


def test_no_delete_leaves_orphans(obs: Obs, dd: FakeDatadog) -> None:
    obs("sync", "--env", "prod")
    queues = obs.definitions / "queues.yaml"
    text = queues.read_text()
    queues.write_text(text[: text.index("  - name: introduction\n")] + text[text.index("  - name: reindexing\n") :])
    assert obs("sync", "--env", "prod", "--no-delete") == 0
    assert "18 deletions skipped (--no-delete)." in obs.out
    assert len(keys(dd)) == 125


def test_definitions_that_expand_to_nothing_are_refused(obs: Obs, dd: FakeDatadog) -> None:
    obs("sync", "--env", "prod")
    prod = obs.definitions / "environments" / "prod.yaml"
    off = "".join(f"  {q}: {{enabled: false}}\n" for q in ("critical", "high", "default", "low", "introduction"))
    text = (
        prod.read_text()
        .replace("queues:\n", "queues:\n" + off)
        .replace("  reindexing:\n", "  reindexing:\n    enabled: false\n")
    )
    prod.write_text(text + "dashboards: {oncall: {enabled: false}}\n")
    assert obs("sync", "--env", "prod", "--allow-mass-delete") == 1
    assert "error: the definitions expand to nothing in 'prod': refusing to sync" in obs.err
    assert len(keys(dd)) == 125


def test_two_live_objects_with_one_key_are_repaired_keeping_the_older(obs: Obs, dd: FakeDatadog) -> None:
    obs("sync", "--env", "prod")
    older_id, older = next((i, m) for i, m in dd.monitors.items() if "obs-key:prod/high/age" in m["tags"])
    copy = {k: older[k] for k in ("name", "type", "query", "message", "tags", "options", "priority")}
    newer = dd.create_monitor(copy)
    plan = obs.plan()
    assert changes(plan) == {"prod/high/age": "delete"}
    (repair,) = [c for c in plan["changes"] if c["action"] == "delete"]
    assert repair["id"] == str(newer["id"]) and f"duplicate of monitor {older_id}" in repair["note"]
    assert obs("sync", "--env", "prod") == 0
    assert older_id in dd.monitors and newer["id"] not in dd.monitors


def test_adoption_keeps_the_ids_of_existing_monitors(obs: Obs, dd: FakeDatadog) -> None:
    # Hand-made twins of what obs would create for one queue, without our tags.
    assert obs("render", "--env", "prod", "--out", str(obs.definitions / "out")) == 0
    handmade = {}
    for path in sorted((obs.definitions / "out" / "monitors").glob("prod.critical.*.json")):
        if ".slo-" in path.name:
            continue  # a burn-rate monitor needs its SLO first, and SLOs are not adopted
        body = json.loads(path.read_text())
        body["tags"] = ["team:platform"]
        handmade[dd.create_monitor(body)["id"]] = body["name"]
    assert obs("plan", "--env", "prod") == 0
    assert f"{len(handmade)} unmanaged" not in obs.out  # without --adopt ours are the only monitors read

    assert obs("plan", "--env", "prod", "--adopt", "--format", "json") == 0
    plan = json.loads(obs.out)
    adopted = [c for c in plan["changes"] if c["note"].startswith("adopts unmanaged monitor")]
    assert {int(c["id"]) for c in adopted} == set(handmade)

    assert obs("sync", "--env", "prod", "--adopt") == 0, obs.out
    for monitor_id, name in handmade.items():
        assert dd.monitors[monitor_id]["name"] == name
        assert "managed-by:obs" in dd.monitors[monitor_id]["tags"]
    assert len(dd.monitors) == 120 and all(n == 1 for n in keys(dd).values())
    assert changes(obs.plan()) == {}


def test_dry_run_validates_every_changed_monitor_and_writes_nothing(obs: Obs, dd: FakeDatadog) -> None:
    assert obs("sync", "--env", "prod", "--dry-run") == 0, obs.out
    assert "Dry run: 97 monitors valid, 0 invalid, by the API's validate endpoint" in obs.out
    # The burn-rate monitors name SLOs that do not exist yet: the API cannot check them, and says so.
    assert "Not checked: 6 monitors whose query names an SLO the sync creates first" in obs.out
    assert dd.calls("POST", "/api/v1/monitor/validate") == 97  # composites name monitors not created yet
    assert dd.monitors == {} and dd.dashboards == {} and dd.slos == {}
    obs("sync", "--env", "prod")
    prod = obs.definitions / "environments" / "prod.yaml"
    prod.write_text(prod.read_text() + "slo: {fast_burn: {threshold: 10}}\n")
    assert obs("sync", "--env", "prod", "--dry-run") == 0, obs.out
    assert "Dry run: 3 monitors valid, 0 invalid" in obs.out and "Not checked" not in obs.out


def test_missing_credentials_name_the_variables(obs: Obs, dd: FakeDatadog, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("DD_APP_KEY")
    assert obs("plan", "--env", "prod") == 1
    assert "DD_APP_KEY is not set" in obs.err and "--offline" in obs.err
    assert dd.calls() == 0


def test_wrong_keys_are_a_clear_error(obs: Obs, dd: FakeDatadog, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DD_APP_KEY", "not-the-key")
    assert obs("sync", "--env", "prod") == 1
    assert "HTTP 403" in obs.err and "DD_API_KEY and DD_APP_KEY" in obs.err
    assert dd.monitors == {}


def test_a_monitor_deleted_by_hand_is_created_again(obs: Obs, dd: FakeDatadog) -> None:
    obs("sync", "--env", "prod")
    # One no composite uses: Datadog refuses to delete a monitor a composite references.
    monitor_id = next(i for i, m in dd.monitors.items() if "obs-key:prod/critical/retention_risk" in m["tags"])
    dd.delete_monitor(monitor_id)
    prod = obs.definitions / "environments" / "prod.yaml"
    prod.write_text(prod.read_text().replace("renotify_interval: 60", "renotify_interval: 30"))
    assert obs("sync", "--env", "prod") == 0
    # Renotify is set only where alerts page, burn-rate alerts aside: 33 monitors and 13 composites.
    assert "Applied: 1 created, 45 updated, 0 deleted, 0 failed" in obs.out


def test_a_refused_write_is_reported_and_the_rest_goes_on(obs: Obs, dd: FakeDatadog, example: Definitions) -> None:
    obs("sync", "--env", "prod")
    prod = obs.definitions / "environments" / "prod.yaml"
    prod.write_text(prod.read_text().replace("renotify_interval: 60", "renotify_interval: 30"))
    desired = expand(load(obs.definitions), "prod")
    with closing(Datadog(endpoint(os.environ, "datadoghq.com", "prod"), backoff=0.01)) as client:
        plan = reads.plan(client, "prod", desired)
        gone = next(c for c in plan.pending if c.key == "prod/critical/retention_risk")
        dd.delete_monitor(int(str(gone.id)))  # deleted by hand between the plan and the sync
        outcomes = apply.apply(plan, client)
    failed = [o for o in outcomes if not o.ok]
    assert [o.change.key for o in failed] == ["prod/critical/retention_risk"]
    assert "HTTP 404: Monitor not found" in failed[0].error
    assert sum(o.ok for o in outcomes) == len(plan.pending) - 1 == 45
    text = report.outcomes(outcomes, dry_run=False, seconds=1.0)
    assert (
        f"failed: update monitor prod/critical/retention_risk (id {gone.id}): PUT /api/v1/monitor/{{id}}: HTTP 404"
        in text
    )
    assert "Applied: 0 created, 45 updated, 0 deleted, 1 failed" in text
    assert obs("sync", "--env", "prod") == 0  # the next sync creates it again
    assert "Applied: 1 created" in obs.out


def test_rate_limits_are_respected_without_429s(obs: Obs, dd: FakeDatadog) -> None:
    dd.faults.rate_limit, dd.faults.rate_period = 20, 1.0
    assert obs("sync", "--env", "prod", "--verbose") == 0, obs.err
    assert [r for r in dd.log if r.status == 429] == []
    assert "0 throttled (429)" in obs.err


def test_a_429_waits_for_the_reset_and_is_not_a_failure(obs: Obs, dd: FakeDatadog) -> None:
    # Three 429s: each holds the group's requests until the reset, a whole second at least.
    dd.faults.rate_period = 1.0
    dd.faults.targeted.append(Targeted("POST", "/api/v1/monitor", status=429, error="Rate limit exceeded", times=3))
    assert obs("sync", "--env", "prod", "--verbose") == 0, obs.out
    assert any(r.status == 429 for r in dd.log)
    assert len(keys(dd)) == 125 and all(n == 1 for n in keys(dd).values())


def _fleet_queue(index: int) -> str:
    """A generated queue with a worker, a DLQ and a topic, rotating the example's classes (as bench/fleet.py)."""
    name, kind = f"q{index:04d}", ("short", "long", "feature")[index % 3]
    slo = "    slo_seconds: 60\n" if kind == "short" else ""
    return (
        f"\n  - name: {name}\n    class: {kind}\n{slo}    description: Generated queue {index}.\n"
        f"    worker: {{cluster: jobs, service: {name}-worker, min_tasks: {int(kind != 'feature')}, max_tasks: 10}}\n"
        f"    dlq: {{name: {name}-dlq, max_receive_count: 3}}\n    topics: [{{name: {name}-topic}}]\n"
        f"    runbook: https://runbooks.example.com/jobs/{name}\n    owner: platform\n"
    )


def live_keys(env: str, desired: Sequence[Resource]) -> Counter[tuple[str, str]]:
    """Every live object of every kind obs manages (the kinds registry's own readers, after the storm), by kind
    and key: a kind added to the registry is counted without a change here."""
    found: Counter[tuple[str, str]] = Counter()
    with closing(Datadog(endpoint(os.environ, "datadoghq.com", env))) as client:
        for kind in KINDS:
            objs = listing.wider(client, kind) if kind.listing.wider else listing.listed(client, kind, env, desired)
            found.update((str(o.kind), o.key) for o in objs if o.key is not None)
    return found


@pytest.mark.heavy(13)
def test_a_fault_storm_converges_in_one_run_without_duplicates(obs: Obs, dd: FakeDatadog) -> None:
    """About 1,000 objects of every kind (monitors, composites, SLOs, the dashboard, downtimes) under about 10%
    faults: 5xx (some as a proxy's HTML page), answers lost after the write committed, answers slower than the
    client's timeout, writes that commit after the client gave up, and a few 429s. One run creates every object
    exactly once, and reports as failed only what really is not there."""
    queues = obs.definitions / "queues.yaml"
    queues.write_text(queues.read_text() + "".join(_fleet_queue(i) for i in range(50)))
    desired = expand(load(obs.definitions), "prod")
    assert {r.kind for r in desired} == set(KINDS)  # the storm covers every kind obs manages
    theirs = dd.create_monitor({"name": "hand-made", "type": "query alert", "query": "avg(last_5m):avg:x{*} > 1"})
    before = dict(dd.monitors[theirs["id"]])
    faults = dd.faults
    faults.error_rate, faults.proxy_page_rate, faults.lost_response_rate = 0.02, 0.01, 0.03
    faults.timeout_rate, faults.late_commit_rate, faults.timeout_seconds = 0.01, 0.02, 0.5
    # 429s are few: each holds every request of its group until the reset, which Datadog gives in whole
    # seconds (at least 1 s), so the 2% this storm once drew spent most of its minute waiting.
    faults.throttle_rate, faults.rate_period = 0.002, 0.2
    paths = {kind.api.path for kind in KINDS}  # and the first answers to each kind's creates are lost
    faults.targeted += [Targeted("POST", path, status=LOST, times=2) for path in sorted(paths)]
    faults.targeted.append(Targeted("POST", "/api/v1/monitor", status=429, error="Rate limit exceeded", times=2))
    code = obs("sync", "--env", "prod", "--timeout", "0.3")
    for name in ("error_rate", "proxy_page_rate", "lost_response_rate", "timeout_rate", "late_commit_rate"):
        setattr(faults, name, 0.0)
    faults.throttle_rate = 0.0
    statuses = Counter(r.status for r in dd.log)
    assert statuses[LOST_RESPONSE] and statuses[LATE_COMMIT] and statuses[TIMED_OUT] and statuses[429]
    assert {r.path for r in dd.log if r.status == LOST_RESPONSE and r.method == "POST"} == paths
    live = live_keys("prod", desired)
    assert [k for k, n in live.items() if n > 1] == [], obs.out[-3000:] + obs.err[-2000:]  # no duplicate after one run
    failed = re.findall(r"^(?:failed|uncertain): create (\w+) ([^\s:]+)", obs.out, re.MULTILINE)
    partial = re.findall(r"^note: create \w+ ([^\s:]+): sent without", obs.out, re.MULTILINE)
    assert [k for k in failed if k in live] == []  # a change reported failed is really not made
    assert code == (1 if failed else 0), "\n".join(line for line in obs.out.splitlines() if "failed" in line)
    plan = obs.plan()
    assert set(changes(plan)) == {key for _, key in failed} | set(partial)
    assert plan["summary"]["unmanaged"] == 0
    assert plan["summary"]["unchanged"] + len(failed) + len(partial) == len(desired)
    assert dd.monitors[theirs["id"]] == before


def test_no_secret_appears_in_any_output(
    example_copy: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    secrets = {"DD_API_KEY": "sekret-api-5f1c0ffee", "DD_APP_KEY": "sekret-app-9d2decade"}
    obs = Obs(example_copy, capsys)
    seen = []
    with FakeDatadog(api_key=secrets["DD_API_KEY"], app_key=secrets["DD_APP_KEY"]) as dd:
        monkeypatch.setenv("DD_HOST", dd.url)
        for name, value in secrets.items():
            monkeypatch.setenv(name, value)
        for argv in (
            ["sync", "--env", "prod", "--verbose"],
            ["plan", "--env", "prod", "--verbose", "--format", "json"],
        ):
            seen.append((obs(*argv), obs.out + obs.err))
        dd.faults.error_rate = 1.0  # every request fails: retries, then an error
        seen.append((obs("plan", "--env", "prod", "--verbose", "--timeout", "1"), obs.out + obs.err))
        dd.faults.error_rate = 0.0
        monkeypatch.setenv("DD_APP_KEY", "sekret-wrong-7e57")  # refused: the error names the variables, not values
        seen.append((obs("sync", "--env", "prod"), obs.out + obs.err))
        monkeypatch.setenv("DD_SITE", "datadoghq.eu")
        monkeypatch.delenv("DD_HOST")
        seen.append((obs("plan", "--env", "prod"), obs.out + obs.err))
    monkeypatch.setenv("DD_HOST", "http://127.0.0.1:9")  # nothing listens there
    seen.append((obs("plan", "--env", "prod", "--timeout", "1"), obs.out + obs.err))
    assert [code for code, _ in seen] == [0, 0, 1, 1, 1, 1]
    for _, text in seen:
        for value in [*secrets.values(), "sekret-wrong-7e57"]:
            assert value not in text


def _synced_then_retyped(obs: Obs, dd: FakeDatadog) -> dict[str, Any]:
    """After a sync, prod/critical/age is a service check (as if made so by hand): obs must replace it."""
    obs("sync", "--env", "prod")
    old_id, old = next((i, m) for i, m in dd.monitors.items() if "obs-key:prod/critical/age" in m["tags"])
    dd.delete_monitor(old_id, force=True)  # a composite uses it
    return dd.create_monitor(
        {
            "name": old["name"],
            "type": "service check",
            "query": '"aws.sqs.can_connect".over("*").by("queuename").last(2).count_by_status()',
            "tags": old["tags"],
        }
    )


def test_a_monitor_whose_type_changed_is_replaced_with_a_warning_that_its_id_changes(obs: Obs, dd: FakeDatadog) -> None:
    stray = _synced_then_retyped(obs, dd)
    assert obs("plan", "--env", "prod") == 0
    assert f"~ monitor prod/critical/age (id {stray['id']})" in obs.out
    assert "type cannot change in place: it is deleted and created again, with a new ID" in obs.out
    assert obs("sync", "--env", "prod") == 0, obs.out
    assert "replaced: the new ID is" in obs.out
    assert stray["id"] not in dd.monitors
    assert keys(dd)["prod/critical/age"] == 1
    assert changes(obs.plan()) == {}


class _CreatesFailUncommitted(Datadog):
    """Every create fails with an answer that cannot say whether it was committed (a 502); none was."""

    def create(self, kind: Kind, body: Mapping[str, Any]) -> dict[str, Any]:
        raise RequestFailed(f"POST /api/v1/{kind}", "HTTP 502: Bad Gateway", 502, ambiguous=True)


def test_a_replacement_whose_create_was_not_committed_keeps_the_old_monitor(obs: Obs, dd: FakeDatadog) -> None:
    """The lookup after an ambiguous create must not mistake the monitor being replaced (same key) for the new one."""
    stray = _synced_then_retyped(obs, dd)
    desired = expand(load(obs.definitions), "prod")
    where = endpoint(os.environ, "datadoghq.com", "prod")
    with closing(_CreatesFailUncommitted(where, timeout=1.0, backoff=0.01)) as client:  # a short settle (2 s)
        plan = reads.plan(client, "prod", desired)
        outcomes = {o.change.key: o for o in apply.apply(plan, client)}
    outcome = outcomes.pop("prod/critical/age")
    assert not outcome.ok and "502" in outcome.error
    assert stray["id"] in dd.monitors
    # The composite over it points at the object that still carries the key, never at a placeholder.
    (composite,) = outcomes.values()
    assert composite.change.key == "prod/critical/workers_capped" and composite.ok
    assert str(stray["id"]) in dd.monitors[int(str(composite.id))]["query"]


def test_a_timeout_of_zero_is_a_usage_error_not_no_timeout(obs: Obs, dd: FakeDatadog) -> None:
    with pytest.raises(SystemExit) as exit_info:
        obs("plan", "--env", "prod", "--timeout", "0")
    assert exit_info.value.code == 1
    assert "--timeout: must be more than 0" in obs.capsys.readouterr().err
    assert dd.calls() == 0


def test_a_setting_removed_from_the_definitions_is_removed_live(obs: Obs, dd: FakeDatadog) -> None:
    obs("sync", "--env", "prod")
    prod = obs.definitions / "environments" / "prod.yaml"
    prod.write_text(prod.read_text().replace("renotify_interval: 60", "renotify_interval: 0"))
    plan = obs.plan()
    fields = {(f["path"], f["old"], f["new"]) for c in plan["changes"] for f in c["fields"]}
    assert fields == {("options.renotify_interval", 60, None)}
    assert obs("sync", "--env", "prod") == 0
    assert not any("renotify_interval" in m["options"] for m in dd.monitors.values())
    assert changes(obs.plan()) == {}


def test_a_monitor_whose_env_tag_was_removed_by_hand_is_updated_not_duplicated(obs: Obs, dd: FakeDatadog) -> None:
    obs("sync", "--env", "prod")
    monitor_id, monitor = next((i, m) for i, m in dd.monitors.items() if "obs-key:prod/critical/age" in m["tags"])
    dd.update_monitor(monitor_id, {"tags": [t for t in monitor["tags"] if t != "env:prod"]})
    plan = obs.plan()
    assert changes(plan) == {"prod/critical/age": "update"}
    assert obs("sync", "--env", "prod") == 0
    assert "env:prod" in dd.monitors[monitor_id]["tags"] and keys(dd)["prod/critical/age"] == 1


def test_one_refusal_for_every_write_is_reported_a_few_times_not_once_a_monitor(obs: Obs, dd: FakeDatadog) -> None:
    obs("sync", "--env", "prod")
    prod = obs.definitions / "environments" / "prod.yaml"
    prod.write_text(prod.read_text().replace("renotify_interval: 60", "renotify_interval: 30"))
    desired = expand(load(obs.definitions), "prod")
    with closing(Datadog(endpoint(os.environ, "datadoghq.com", "prod"))) as reader:
        plan = reads.plan(reader, "prod", desired)
    with closing(Datadog(Endpoint(dd.url, dd.api_key, "an-application-key-without-rights"))) as writer:
        outcomes = apply.apply(plan, writer)
    text = report.outcomes(outcomes, dry_run=False, seconds=1.0)
    assert text.count("failed: update monitor") == 3
    assert text.count("PUT /api/v1/monitor/{id}: HTTP 403: Forbidden") == 3
    assert "failed: 43 more with the same error" in text and "46 failed" in text


def test_verbose_shows_the_calls_even_when_reading_fails(
    obs: Obs, dd: FakeDatadog, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DD_APP_KEY", "not-the-application-key")
    assert obs("plan", "--env", "prod", "--verbose") == 1
    assert "could not read the live org" in obs.err
    # The kinds' lists are read at once: each refused call is counted, the one the error names among them.
    calls = next(line for line in obs.err.splitlines() if line.startswith("API calls: "))
    assert "GET /api/v1/slo 1" in calls and "(GET /api/v1/slo needs slos_read)" in obs.err
    assert int(calls.split()[2]) == len(dd.log)  # every call made was over before obs returned


@pytest.mark.parametrize("command", ["plan", "sync", "links"])
def test_lists_read_while_expanding_never_hide_a_problem_of_the_definitions(
    obs: Obs, dd: FakeDatadog, monkeypatch: pytest.MonkeyPatch, command: str
) -> None:
    """The lists are read while the definitions expand; a problem found in the expansion is what obs says, the
    org only read, every call over before obs returns; without credentials it is still said first."""
    staging = obs.definitions / "environments" / "staging.yaml"
    staging.write_text(
        staging.read_text().replace("name: staging\n", "name: staging\nmetrics:\n  deletes_none: {enabled: false}\n", 1)
    )
    said = "metric 'deletes_none' makes no monitor for queue 'critical' in staging"
    assert obs(command, "--env", "staging", "--verbose") == 1
    assert said in obs.err and "Traceback" not in obs.err
    calls = next(line for line in obs.err.splitlines() if line.startswith("API calls: "))
    assert {r.method for r in dd.log} <= {"GET"} and int(calls.split()[2]) == len(dd.log)
    monkeypatch.delenv("DD_API_KEY")
    assert obs(command, "--env", "staging") == 1
    assert said in obs.err and "DD_API_KEY" not in obs.err


def test_a_problem_of_the_definitions_is_said_at_once_while_a_list_waits_out_a_rate_limit(
    obs: Obs, dd: FakeDatadog
) -> None:
    """Every read is refused with a 429 whose window ends in a minute: the lists read ahead wait for it. The
    expansion then fails: obs says why at once, and no list is asked for again after the wait."""
    staging = obs.definitions / "environments" / "staging.yaml"
    staging.write_text(
        staging.read_text().replace("name: staging\n", "name: staging\nmetrics:\n  deletes_none: {enabled: false}\n", 1)
    )
    queues = obs.definitions / "queues.yaml"
    queues.write_text(queues.read_text() + generated_queues(100))  # an expansion that outlasts the first answers
    dd.faults.throttle_rate, dd.faults.rate_period = 1.0, 60.0
    began = time.monotonic()
    assert obs("plan", "--env", "staging") == 1
    assert time.monotonic() - began < 30  # not after the window: a read that waits for it is let go unsent
    assert "metric 'deletes_none' makes no monitor for queue 'critical' in staging" in obs.err
    assert "Traceback" not in obs.err
    asked = Counter((r.method, r.path) for r in dd.log)
    assert asked and all(r.status == 429 for r in dd.log) and max(asked.values()) == 1, asked


class _LastCreateOfAgeLosesItsAnswer(Datadog):
    """prod/critical/age: two creates fail uncommitted (a 502), the third commits and its answer is lost."""

    tries = 0

    def create(self, kind: Kind, body: Mapping[str, Any]) -> dict[str, Any]:
        if "obs-key:prod/critical/age" not in body.get("tags", []):
            return super().create(kind, body)
        self.tries += 1
        if self.tries == 3:
            super().create(kind, body)
        raise RequestFailed(f"POST /api/v1/{kind}", "HTTP 502: Bad Gateway", 502, ambiguous=True)


def test_a_monitor_whose_last_create_lost_its_answer_is_found_before_its_composite(obs: Obs, dd: FakeDatadog) -> None:
    """The composite over it is written with its ID, not failed for want of one while the sync settles."""
    desired = expand(load(obs.definitions), "prod")
    where = endpoint(os.environ, "datadoghq.com", "prod")
    with closing(_LastCreateOfAgeLosesItsAnswer(where, timeout=1.0, backoff=0.01)) as client:  # a short settle
        plan = reads.plan(client, "prod", desired)
        outcomes = {o.change.key: o for o in apply.apply(plan, client)}
    assert [key for key, o in outcomes.items() if not o.ok] == []
    age, capped = outcomes["prod/critical/age"], outcomes["prod/critical/workers_capped"]
    assert "found it committed, by key" in age.note
    assert str(age.id) in dd.monitors[int(str(capped.id))]["query"]
    assert keys(dd)["prod/critical/age"] == 1
