"""Expansion: which monitors exist (applicability), what they say (precedence), and that Datadog accepts them."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from sync.check import models
from sync.core import placeholders
from sync.core.kinds import COMPOSITE, DASHBOARD, MONITOR, SLO
from sync.core.resources import Resource
from sync.definitions.load import load
from sync.definitions.model import Definitions
from sync.expand.desired import expand, expand_all

ENVS = ("dev", "prod", "staging")


def _monitors(defs: Definitions, env: str) -> dict[str, Resource]:
    return {r.key: r for r in expand(defs, env) if r.kind == MONITOR}


def _metrics_of(monitors: dict[str, Resource], env: str, queue: str) -> set[str]:
    return {key.split("/")[2] for key in monitors if key.startswith(f"{env}/{queue}/")}


def _composites_of(defs: Definitions, env: str, queue: str) -> set[str]:
    return {r.key.split("/")[2] for r in expand(defs, env) if r.kind == COMPOSITE and r.queue == queue}


ALL = {"delivery_failures", "dlq", "dlq_age", "dlq_arrivals", "in_flight", "in_flight_fleet", "retention_risk"}
ALL |= {"worker_cpu", "worker_memory", "messages_waiting", "receive_without_delete"}
ALWAYS_ON = {"backlog_floor", "backlog_minutes", "deletes_none", "depth"}  # queues whose workers never stop
SHORT = ALL | ALWAYS_ON | {"age", "workers_at_max"}
BURNS = {"slo-fast-burn", "slo-slow-burn"}  # the burn-rate alerts of a queue with slo_seconds
FEATURE = ALL | {"age", "workers_at_max", "no_running_tasks", "tasks_short"}


@pytest.mark.parametrize(
    ("queue", "expected", "composites"),
    [
        # Only critical's subscription declares a redrive DLQ.
        ("critical", SHORT | {"subscription_dlq"} | BURNS, {"backlog_draining", "consumers_stuck", "workers_capped"}),
        ("high", SHORT | BURNS, {"backlog_draining", "consumers_stuck", "workers_capped"}),
        ("default", SHORT | BURNS, {"backlog_draining", "consumers_stuck", "workers_capped"}),
        # Long jobs: no age SLO (so no workers_capped); a forecast of retention instead.
        ("low", ALL | ALWAYS_ON | {"retention_forecast"}, {"backlog_draining", "consumers_stuck"}),
        # Feature queues idle at zero workers: no depth or drain-time alerts, age in hours, but a failed
        # scale-out from zero pages within minutes.
        ("introduction", FEATURE, {"scale_from_zero_failed", "workers_not_starting", "workers_capped"}),
        # No feeding topic, so no delivery-failure monitor.
        (
            "reindexing",
            FEATURE - {"delivery_failures"},
            {"scale_from_zero_failed", "workers_not_starting", "workers_capped"},
        ),
    ],
)
def test_each_queue_gets_the_metrics_that_apply_to_it(
    example: Definitions, queue: str, expected: set[str], composites: set[str]
) -> None:
    assert _metrics_of(_monitors(example, "prod"), "prod", queue) == expected
    assert _composites_of(example, "prod", queue) == composites


def test_an_environment_can_disable_a_queue_and_a_metric(example: Definitions) -> None:
    dev, prod = _monitors(example, "dev"), _monitors(example, "prod")
    assert _metrics_of(dev, "dev", "reindexing") == set()
    assert _metrics_of(prod, "prod", "reindexing")
    assert not any(k.endswith(("/worker_cpu", "/worker_memory")) for k in dev)
    assert "prod/high/worker_cpu" in prod


def test_example_counts(example: Definitions) -> None:
    counts = {
        env: tuple(sum(r.kind == kind for r in rs) for kind in (COMPOSITE, MONITOR, DASHBOARD, SLO))
        for env, rs in expand_all(example).items()
    }
    # Each of the three queues with slo_seconds: one SLO and two burn-rate monitors (no SLOs in dev).
    assert counts == {"dev": (14, 73, 1, 0), "prod": (17, 103, 1, 3), "staging": (17, 103, 1, 3)}


def test_one_delivery_failure_monitor_per_feeding_topic(example: Definitions) -> None:
    monitor = _monitors(example, "prod")["prod/critical/delivery_failures/jobs-critical"]
    assert "topicname:prod-jobs-critical" in monitor.body["query"]
    assert "obs trace --env prod --topic prod-jobs-critical --since 2h" in monitor.body["message"]


@pytest.mark.parametrize("env", ENVS)
def test_every_body_is_accepted_by_the_datadog_models(example: Definitions, env: str) -> None:
    for resource in expand(example, env):
        assert models.problems(resource.kind, resource.body) == [], resource.key


COMPARATOR = re.compile(r"(>=|<=|>|<)\s*(-?[0-9.]+)$")


@pytest.mark.parametrize("env", ENVS)
def test_monitors_alert_correctly(example: Definitions, env: str) -> None:
    for key, monitor in _monitors(example, env).items():
        body = monitor.body
        if body["type"] == "slo alert":
            continue  # burn-rate alerts: tests/test_slo_definitions.py
        options = body["options"]
        thresholds = options["thresholds"]
        match = COMPARATOR.search(body["query"])
        assert match, key
        comparator, value = match.group(1), float(match.group(2))
        assert value == thresholds["critical"], f"{key}: query threshold differs from options"
        if "warning" in thresholds:
            below = thresholds["warning"] < thresholds["critical"]
            assert below if comparator in (">", ">=") else not below, key
        assert "\n" not in body["query"], key
        assert body["type"] == "query alert"
        assert options["evaluation_delay"] >= 900, f"{key}: crawled CloudWatch metrics arrive late"
        assert options["require_full_window"] is False
        assert 1 <= body["priority"] <= 5
        tags = body["tags"]
        assert tags == sorted(tags) and all(t == t.lower() for t in tags), key
        assert {"managed-by:obs", f"obs-key:{key}", f"env:{env}"} <= set(tags)
        assert f"in {env}" in body["message"] and f"[{env}]" in body["name"]
        assert "Runbook: https://" in body["message"]


AS_COUNT_HEAD = re.compile(r"^(?:change\()?(avg|sum|max|min)\(")


@pytest.mark.parametrize("env", ENVS)
def test_every_query_is_scoped_and_evaluated_on_a_documented_path(example: Definitions, env: str) -> None:
    """.as_count() only under sum; every AWS metric filtered by the environment's region."""
    region = example.environment(env).region
    for key, monitor in _monitors(example, env).items():
        query = monitor.body["query"]
        if monitor.body["type"] == "slo alert":
            continue  # a burn rate reads its SLO, which is scoped like the monitors (tests/test_slos.py)
        if ".as_count()" in query:
            head = AS_COUNT_HEAD.match(query)
            assert head and head.group(1) == "sum", key
        selectors = re.findall(r"aws\.[a-z_.]+\{([^}]*)\}", query)
        assert selectors and all(f"region:{region}" in s.split(",") for s in selectors), key


def test_a_declared_account_tag_scopes_every_aws_query(example_copy: Path) -> None:
    prod = example_copy / "environments" / "prod.yaml"
    prod.write_text(prod.read_text().replace("region: us-east-1}", "region: us-east-1, account_tag: aws_account}"))
    for key, monitor in _monitors(load(example_copy), "prod").items():
        selectors = re.findall(r"aws\.[a-z_.]+\{([^}]*)\}", monitor.body["query"])
        assert all("aws_account:111111111111" in s.split(",") for s in selectors), key


def test_paging_in_flight_thresholds_are_reachable_by_the_fleet(example: Definitions) -> None:
    """A receive returns at most 10 messages: a page above 10 receives' worth per task would never ring."""
    queues = {q.name: q for q in example.queues}
    paging = [
        (key, m)
        for key, m in _monitors(example, "prod").items()
        if "approximate_number_of_messages_not_visible" in m.body["query"]
        and "@pagerduty" in m.body["message"].split("{{#is_alert}}")[-1].split("{{/is_alert}}")[0]
        and "visible" not in m.body["query"].replace("not_visible", "")
    ]
    assert {key.split("/")[2] for key, _ in paging} == {"in_flight_fleet"}
    for key, monitor in paging:
        worker = queues[key.split("/")[1]].worker
        assert worker is not None
        assert monitor.body["options"]["thresholds"]["critical"] <= 100 * worker.max_tasks, key


def test_renotify_only_where_alerts_page(example: Definitions) -> None:
    """Chat is never renotified; a page is, except a burn-rate alert, which trails its fault by the time its
    short window needs to empty: an hourly reminder would come after the queue had recovered."""
    for resource in expand(example, "prod"):
        if not resource.kind.notifies:
            continue
        alert = resource.body["message"].split("{{#is_alert}}")[-1].split("{{/is_alert}}")[0]
        pages = "{{#is_alert}}" in resource.body["message"] and "@pagerduty" in alert
        burn = resource.body["type"] == "slo alert"
        assert ("renotify_interval" in resource.body["options"]) == (pages and not burn), resource.key


def test_monitors_over_metrics_that_go_silent_resolve_on_their_own(example: Definitions) -> None:
    timeouts = {k.split("/", 1)[1]: m.body["options"].get("timeout_h") for k, m in _monitors(example, "prod").items()}
    assert timeouts["critical/delivery_failures/jobs-critical"] == 1
    for metric in ("age", "in_flight", "in_flight_fleet", "backlog_minutes", "backlog_floor", "retention_risk"):
        assert timeouts[f"critical/{metric}"] == 2, metric
    assert timeouts["critical/dlq"] is None, "a DLQ holding messages keeps reporting"


def _delayed(resource: Resource) -> bool:
    """A metric monitor: burn-rate alerts read their SLO and have no evaluation delay of their own."""
    return resource.kind == MONITOR and resource.body["type"] != "slo alert"


def test_metric_streams_shorten_the_evaluation_delay(example_copy: Path) -> None:
    staging = example_copy / "environments" / "staging.yaml"
    staging.write_text(staging.read_text().replace("name: staging\n", "name: staging\nmetrics_source: streams\n"))
    defs = load(example_copy)
    delays = {r.key: r.body["options"]["evaluation_delay"] for r in expand(defs, "staging") if _delayed(r)}
    # ECS task counts come from the ECS API, which Metric Streams cannot carry: their monitors keep the crawler's.
    polled = {
        key
        for key, r in {r.key: r for r in expand(defs, "staging")}.items()
        if "aws.ecs.service.desired" in str(r.body.get("query", ""))
        or "aws.ecs.service.running" in str(r.body.get("query", ""))
    }
    assert polled and {delays[key] for key in polled} == {900}
    assert {delay for key, delay in delays.items() if key not in polled} == {300}
    assert {r.body["options"]["evaluation_delay"] for r in expand(defs, "prod") if _delayed(r)} == {900}
    # A metric's own delay still wins over the environment's source.
    _set(example_copy, "monitors/worker_cpu.yaml", (), "evaluation_delay", 600)
    delays = {
        r.key: r.body["options"]["evaluation_delay"] for r in expand(load(example_copy), "staging") if _delayed(r)
    }
    assert delays["staging/high/worker_cpu"] == 600 and delays["staging/high/age"] == 300


def test_composites_combine_the_monitors_of_their_queue(example: Definitions) -> None:
    composites = {r.key: r for r in expand(example, "prod") if r.kind == COMPOSITE}
    stuck = composites["prod/low/consumers_stuck"].body
    assert stuck["type"] == "composite"
    assert stuck["query"] == "${monitor_id:prod/low/messages_waiting} && ${monitor_id:prod/low/deletes_none}"
    assert "{{#is_alert}}@pagerduty-jobs-platform{{/is_alert}}" in stuck["message"]
    assert "thresholds" not in stuck["options"] and stuck["options"]["notify_no_data"] is False
    assert {"managed-by:obs", "obs-key:prod/low/consumers_stuck", "metric:consumers_stuck"} <= set(stuck["tags"])
    monitors = _monitors(example, "prod")
    for resource in composites.values():
        for _, key in placeholders.refs(resource.body["query"]):
            assert key in monitors, f"{resource.key} names {key}, which is not a monitor"
            if monitors[key].body["priority"] == 5:  # there only to be combined: it notifies no one itself
                assert "{{#is_" not in monitors[key].body["message"], key


def test_no_data_pages_only_where_workers_always_poll(example: Definitions) -> None:
    prod = _monitors(example, "prod")
    assert prod["prod/critical/depth"].body["options"]["notify_no_data"] is True
    assert prod["prod/critical/depth"].body["options"]["no_data_timeframe"] == 120
    # Feature queues scale to zero, an empty DLQ stops reporting: silence there is normal.
    assert prod["prod/introduction/age"].body["options"]["notify_no_data"] is False
    assert prod["prod/critical/dlq"].body["options"]["notify_no_data"] is False
    assert "no_data_timeframe" not in prod["prod/critical/dlq"].body["options"]


def test_thresholds_follow_the_queue(example: Definitions) -> None:
    prod = _monitors(example, "prod")
    assert prod["prod/critical/age"].body["options"]["thresholds"] == {"critical": 90, "warning": 30}
    assert prod["prod/high/age"].body["options"]["thresholds"] == {"critical": 360, "warning": 120}
    assert prod["prod/introduction/age"].body["options"]["thresholds"] == {"critical": 14400, "warning": 7200}
    assert prod["prod/reindexing/age"].body["options"]["thresholds"] == {"critical": 21600, "warning": 10800}
    assert prod["prod/low/retention_risk"].body["options"]["thresholds"] == {"critical": 691200, "warning": 432000}
    assert prod["prod/critical/in_flight"].body["options"]["thresholds"] == {"critical": 96000, "warning": 60000}


def test_notification_by_severity_and_environment(example: Definitions) -> None:
    # A queue without an SLO: its age pages (critical's leaves its page to the SLO's burn-rate alert).
    prod = _monitors(example, "prod")["prod/introduction/age"].body["message"]
    assert "{{#is_alert}}@pagerduty-jobs-platform{{/is_alert}}" in prod
    assert "{{#is_warning}}@slack-jobs-alerts{{/is_warning}}" in prod
    staging = _monitors(example, "staging")["staging/critical/age"].body["message"]
    assert "@pagerduty" not in staging and "{{#is_alert}}@slack-jobs-staging{{/is_alert}}" in staging
    dev = _monitors(example, "dev")["dev/critical/age"].body["message"]
    assert "@" not in dev.replace("{{", "")


def test_a_topic_feeding_two_queues_gets_one_monitor(example_copy: Path) -> None:
    text = (example_copy / "queues.yaml").read_text()
    (example_copy / "queues.yaml").write_text(
        text.replace("      - {name: jobs-high}\n", "      - {name: jobs-critical}\n")
    )
    monitors = _monitors(load(example_copy), "prod")
    failures = {k: m for k, m in monitors.items() if "/delivery_failures/" in k}
    assert "prod/critical/delivery_failures/jobs-critical" in failures
    assert not any(k.startswith("prod/high/") for k in failures)
    message = failures["prod/critical/delivery_failures/jobs-critical"].body["message"]
    assert "the queues it feeds (prod-critical, prod-high)" in message


# --- precedence: each layer overrides the ones below it -------------------------------------------------------

LAYERS = (
    ("monitors/worker_cpu.yaml", ()),
    ("monitors/worker_cpu.yaml", ("by_class", "short")),
    ("queues.yaml", ("queues", 1, "metrics", "worker_cpu")),
    ("environments/staging.yaml", ("monitors",)),
    ("environments/staging.yaml", ("metrics", "worker_cpu")),
    ("environments/staging.yaml", ("queues", "high", "monitors")),
    ("environments/staging.yaml", ("queues", "high", "metrics", "worker_cpu")),
)


def _set(root: Path, file: str, path: tuple[str | int, ...], key: str, value: Any) -> None:
    data = yaml.safe_load((root / file).read_text())
    node = data
    for part in path:
        node = node.setdefault(part, {}) if isinstance(part, str) else node[part]
    node[key] = value
    (root / file).write_text(yaml.safe_dump(data, sort_keys=False))


@pytest.mark.parametrize("top", range(len(LAYERS) + 1))
def test_settings_precedence(example_copy: Path, top: int) -> None:
    """Layers 1..top set evaluation_delay to 900 + their number; the highest set layer must win."""
    for number, (file, path) in enumerate(LAYERS[:top], start=1):
        _set(example_copy, file, path, "evaluation_delay", 900 + number)
    defs = load(example_copy)
    assert defs.queues[1].name == "high"
    monitors = _monitors(defs, "staging")
    assert monitors["staging/high/worker_cpu"].body["options"]["evaluation_delay"] == 900 + top
    # Queue-specific layers (3, 6, 7) must not leak to another queue of the same class.
    expected_other = 900 + max((n for n in range(1, top + 1) if n not in (3, 6, 7)), default=0)
    assert monitors["staging/critical/worker_cpu"].body["options"]["evaluation_delay"] == expected_other
    # Environment layers must not leak to another environment.
    expected_prod = 900 + max((n for n in range(1, top + 1) if n <= 3), default=0)
    assert _monitors(defs, "prod")["prod/high/worker_cpu"].body["options"]["evaluation_delay"] == expected_prod


def test_null_removes_an_inherited_key(example_copy: Path) -> None:
    _set(example_copy, "environments/prod.yaml", ("metrics", "worker_cpu"), "thresholds", {"warning": None})
    monitor = _monitors(load(example_copy), "prod")["prod/high/worker_cpu"]
    assert monitor.body["options"]["thresholds"] == {"critical": 90}


def test_environment_overrides_queue_attributes(example: Definitions) -> None:
    staging = _monitors(example, "staging")["staging/critical/depth"]
    assert staging.body["options"]["notify_no_data"] is True
    message = _monitors(example, "staging")["staging/low/depth"].body["message"]
    assert "(1 to 5 tasks)" in message
    assert "(1 to 4 tasks)" not in message
    backlog = _monitors(example, "staging")["staging/critical/backlog_minutes"].body["message"]
    assert "max_tasks is 4" in backlog
    assert "max_tasks is 20" in _monitors(example, "prod")["prod/critical/backlog_minutes"].body["message"]


def test_dashboard_has_queue_variable_and_marker(example: Definitions) -> None:
    dashboard = next(r for r in expand(example, "prod") if r.kind == DASHBOARD)
    body = dashboard.body
    variables = {v["name"]: v for v in body["template_variables"]}
    assert variables["queue"]["prefix"] == "queuename"
    assert "prod-critical" in variables["queue"]["available_values"]
    assert body["description"].splitlines()[-1] == "managed-by:obs obs-key:prod/oncall"
    age = next(w for w in body["widgets"] if "Oldest" in w["definition"].get("title", ""))
    assert {"label": "critical SLO", "value": "y = 30", "display_type": "error dashed"} in age["definition"]["markers"]
    queries = [q["query"] for w in body["widgets"] for r in w["definition"].get("requests", []) for q in r["queries"]]
    assert all("$" in q for q in queries), "every widget follows the template variables"
    assert "https://runbooks.example.com/jobs/critical" in body["widgets"][0]["definition"]["content"]
