"""The link builders: Datadog app hosts per site, AWS console hosts per region, the consoles' own encodings."""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

import pytest

from sync.core import placeholders
from sync.core.kinds import MONITOR
from sync.definitions.load import load
from sync.definitions.model import Definitions
from sync.expand import urls
from sync.expand.desired import expand

from .conftest import ROOT

# Datadog's site table: the app host is app.<site> for only three of them.
SITES = {
    "datadoghq.com": "https://app.datadoghq.com",
    "us3.datadoghq.com": "https://us3.datadoghq.com",
    "us5.datadoghq.com": "https://us5.datadoghq.com",
    "datadoghq.eu": "https://app.datadoghq.eu",
    "ddog-gov.com": "https://app.ddog-gov.com",
    "us2.ddog-gov.com": "https://us2.ddog-gov.com",
    "ap1.datadoghq.com": "https://ap1.datadoghq.com",
    "ap2.datadoghq.com": "https://ap2.datadoghq.com",
    "uk1.datadoghq.com": "https://uk1.datadoghq.com",
}


@pytest.mark.parametrize("site", SITES)
def test_every_site_has_its_app_host(site: str) -> None:
    assert urls.page(MONITOR, site, "123") == f"{SITES[site]}/monitors/123"
    assert urls.dashboard(site, "abc-def-ghi", {}) == f"{SITES[site]}/dashboard/abc-def-ghi"


def test_every_site_the_schema_allows_has_a_host() -> None:
    schema = (ROOT / "sync" / "definitions" / "schemas" / "environment.schema.json").read_text()
    allowed = set(re.findall(r'"([a-z0-9.-]+\.(?:com|eu))"', schema))
    assert allowed == set(SITES) == set(urls.APP_HOSTS)


def test_a_dashboard_link_presets_its_template_variables() -> None:
    url = urls.dashboard("datadoghq.eu", "abc", {"queue": "dev-critical", "topic": "dev jobs/x"})
    parts = urlsplit(url)
    assert (parts.netloc, parts.path) == ("app.datadoghq.eu", "/dashboard/abc")
    assert parse_qs(parts.query) == {"tpl_var_queue": ["dev-critical"], "tpl_var_topic": ["dev jobs/x"]}


def test_the_monitor_manager_is_filtered_by_tags() -> None:
    url = urls.monitor_search("datadoghq.com", {"env": "prod", "queue": "critical"})
    assert url.startswith("https://app.datadoghq.com/monitors/manage?")
    assert parse_qs(urlsplit(url).query) == {"q": ['tag:"env:prod" tag:"queue:critical"']}


@pytest.mark.parametrize(
    ("region", "console", "sqs"),
    [
        ("us-east-1", "https://us-east-1.console.aws.amazon.com", "https://sqs.us-east-1.amazonaws.com"),
        ("eu-west-1", "https://eu-west-1.console.aws.amazon.com", "https://sqs.eu-west-1.amazonaws.com"),
        ("us-gov-west-1", "https://console.amazonaws-us-gov.com", "https://sqs.us-gov-west-1.amazonaws.com"),
        ("cn-north-1", "https://console.amazonaws.cn", "https://sqs.cn-north-1.amazonaws.com.cn"),
    ],
)
def test_aws_console_hosts_per_region(region: str, console: str, sqs: str) -> None:
    url = urls.sqs_queue(region, "111111111111", "prod-critical.fifo")
    before, fragment = url.split("#", 1)
    assert before == f"{console}/sqs/v3/home?region={region}"
    assert unquote(fragment.removeprefix("/queues/")) == f"{sqs}/111111111111/prod-critical.fifo"
    ecs = urls.ecs_service(region, "prod-jobs", "prod-critical-worker")
    assert ecs == f"{console}/ecs/v2/clusters/prod-jobs/services/prod-critical-worker/health?region={region}"


def _jsurl(text: str) -> Any:
    """Parse the console's JSURL-like form back (objects, lists, strings, numbers, booleans)."""
    value, rest = _parse(text)
    assert rest == "", rest
    return value


def _parse(text: str) -> tuple[Any, str]:
    if text.startswith("~("):
        text = text[1:]
    if text.startswith("(~"):  # a list: (~item~item)
        items, text = [], text[1:]
        while text.startswith("~"):
            item, text = _parse(text[1:])
            items.append(item)
        return items, text.removeprefix(")")
    if text.startswith("("):  # an object: (key~value~key~value)
        found, text = {}, text[1:]
        while not text.startswith(")"):
            key, text = text.split("~", 1)
            found[key], text = _parse(text)
            text = text.removeprefix("~")
        return found, text[1:]
    token = re.match(r"[^~)]*", text)
    assert token is not None
    raw, text = token.group(0), text[token.end() :]
    if raw.startswith("'"):
        return unquote(raw[1:].replace("*", "%")), text
    return {"true": True, "false": False}.get(raw, raw if not raw.lstrip("-").isdigit() else int(raw)), text


def test_a_logs_insights_link_opens_the_query_on_the_failure_log() -> None:
    group = urls.failure_log_group("eu-west-1", "333333333333", "dev-jobs-critical")
    assert group == "sns/eu-west-1/333333333333/dev-jobs-critical/Failure"
    url = urls.logs_insights("eu-west-1", group, urls.FAILURE_QUERY, 7200)
    before, fragment = url.split("#", 1)
    assert before == "https://eu-west-1.console.aws.amazon.com/cloudwatch/home?region=eu-west-1"
    assert fragment.startswith("logsV2:logs-insights$3FqueryDetail$3D$257E$2528")  # as the console writes it
    decoded = unquote(unquote(fragment.removeprefix("logsV2:logs-insights").replace("$", "%")))
    assert decoded.startswith("?queryDetail=")
    detail = _jsurl(decoded.removeprefix("?queryDetail="))
    assert detail == {
        "end": 0,
        "start": -7200,
        "timeType": "RELATIVE",
        "unit": "seconds",
        "editorString": urls.FAILURE_QUERY,
        "isLiveTail": False,
        "source": [group],
    }


@pytest.mark.parametrize("query", ["stats count(*) by bin(5m)", "fields a ~ b, 'x' | filter @message like /(!)/"])
def test_console_strings_survive_the_characters_the_form_uses(query: str) -> None:
    url = urls.logs_insights("us-east-1", "/aws/x~(y)", query, 60)
    fragment = url.split("#logsV2:logs-insights", 1)[1]
    detail = _jsurl(unquote(unquote(fragment.replace("$", "%"))).removeprefix("?queryDetail="))
    assert (detail["editorString"], detail["source"]) == (query, ["/aws/x~(y)"])


def test_placeholders_resolve_or_leave_their_line_out() -> None:
    body = {"name": "n", "message": "a\nDashboard: https://x/dashboard/${dashboard_id:prod/oncall}?q=1\nb"}
    assert placeholders.awaited([body]) == ["prod/oncall"]
    resolved = placeholders.resolve(body, {("dashboard", "prod/oncall"): "abc-def"})
    assert resolved["message"] == "a\nDashboard: https://x/dashboard/abc-def?q=1\nb"
    assert placeholders.resolve(body, {}) == body
    assert placeholders.resolve(body, {}, drop_unresolved=True)["message"] == "a\nb"
    dashboard = {"title": "t", "widgets": []}
    assert placeholders.resolve(dashboard, {("dashboard", "prod/oncall"): "abc"}) is dashboard


@pytest.fixture(scope="module")
def prod(example: Definitions) -> dict[str, Any]:
    """The monitors and the dashboard (downtimes and SLO corrections link nowhere: they only mute or correct)."""
    return {r.key: r.body for r in expand(example, "prod") if r.kind.name not in ("downtime", "slo-correction")}


def test_every_monitor_links_its_queue_on_the_dashboard_runbook_and_consoles(
    example: Definitions, prod: dict[str, Any]
) -> None:
    queues = {q.name: q for q in example.queues}
    for key, body in prod.items():
        if not key.endswith(("/oncall", "/slo")):  # dashboards and SLOs carry no message
            queue = queues[key.split("/")[1]]
            message = body["message"]
            assert f"Runbook: {queue.runbook}\n" in message
            dashboard = re.search(r"^Dashboard: (\S+)$", message, re.M)
            assert dashboard is not None, key
            query = parse_qs(urlsplit(dashboard.group(1)).query)
            assert query["tpl_var_queue"] == [f"prod-{queue.name}"]
            assert dashboard.group(1).startswith("https://app.datadoghq.com/dashboard/${dashboard_id:prod/oncall}?")
            assert "SQS queue: https://us-east-1.console.aws.amazon.com/sqs/v3/home?region=us-east-1#" in message
            assert ("ECS service: " in message) == (queue.worker is not None)
            assert ("DLQ: " in message) == (queue.dlq is not None)


def test_per_topic_monitors_carry_the_trace_command_and_failure_log(prod: dict[str, Any]) -> None:
    message = prod["prod/critical/delivery_failures/jobs-critical"]["message"]
    assert "Which messages failed: `obs trace --env prod --topic prod-jobs-critical --since 2h --peek-dlq`" in message
    # A Markdown link: bare, its asterisks would turn into emphasis in the notification.
    (insights,) = re.findall(r"^Failed deliveries \(Logs Insights\): \[open\]\((\S+)\)$", message, re.M)
    assert "sns*2Fus-east-1*2F111111111111*2Fprod-jobs-critical*2FFailure" in insights
    assert "Which messages failed" not in prod["prod/critical/age"]["message"]


def test_an_environment_on_another_site_links_to_its_own_app(example_copy: Any) -> None:
    prod = example_copy / "environments" / "prod.yaml"
    prod.write_text(prod.read_text().replace("site: datadoghq.com", "site: ddog-gov.com"))
    bodies = [r.body for r in expand(load(example_copy), "prod") if r.kind == MONITOR]
    assert all("Dashboard: https://app.ddog-gov.com/dashboard/" in b["message"] for b in bodies)
