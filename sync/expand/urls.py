"""Pure: the links that take the person on call to the right place, for every Datadog site and AWS region."""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from typing import Any
from urllib.parse import quote, urlencode

from sync.core.kinds import Kind
from sync.expand import placement

# The app host is not always app.<site> (docs.datadoghq.com/getting_started/site); the API host always is api.<site>.
APP_HOSTS = {
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

# The Logs Insights query a delivery-failure link opens: the newest failures first, with their cause.
FAILURE_QUERY = (
    "fields @timestamp, notification.messageId, delivery.destination, delivery.statusCode, "
    "delivery.providerResponse\n| sort @timestamp desc\n| limit 100"
)
TRACE_SINCE_SECONDS = 7200


def app(site: str) -> str:
    return APP_HOSTS[site]


def page(kind: Kind, site: str, object_id: str) -> str | None:
    """The object's page in the Datadog app, where its kind has one (`Kind.page`). An ID may be a placeholder
    (`${slo_id:KEY}`) until the object exists: its characters stay readable."""
    if not kind.page:
        return None
    return app(site) + kind.page.format(id=quote(object_id, safe="${}:/"))


def monitor_search(site: str, tags: Mapping[str, str]) -> str:
    """The monitor manager filtered to monitors carrying every tag."""
    query = " ".join(f'tag:"{key}:{value}"' for key, value in tags.items())
    return f"{app(site)}/monitors/manage?{urlencode({'q': query}, quote_via=quote)}"


def queue_monitors(site: str, env: str, queue: str) -> str:
    """A queue's monitors in one environment, by the tags obs gives them."""
    return monitor_search(site, {"env": env, "queue": queue})


def dashboard(site: str, dashboard_id: str, variables: Mapping[str, str]) -> str:
    """A dashboard with its template variables preset (`tpl_var_<name>=<value>`)."""
    url = f"{app(site)}/dashboard/{dashboard_id}"
    query = urlencode({f"tpl_var_{name}": value for name, value in variables.items()}, quote_via=quote)
    return f"{url}?{query}" if query else url


def sqs_queue(region: str, account_id: str, name: str) -> str:
    queue_url = f"{placement.endpoint('sqs', region)}/{account_id}/{name}"
    return f"{placement.console(region)}/sqs/v3/home?region={region}#/queues/{quote(queue_url, safe='')}"


def ecs_service(region: str, cluster: str, service: str) -> str:
    path = f"/ecs/v2/clusters/{quote(cluster, safe='')}/services/{quote(service, safe='')}/health"
    return f"{placement.console(region)}{path}?region={region}"


def sns_topic(region: str, arn: str) -> str:
    return f"{placement.console(region)}/sns/v3/home?region={region}#/topic/{arn}"


def failure_log_group(region: str, account_id: str, topic_name: str) -> str:
    """Where SNS writes the delivery status of the messages it failed to deliver from a topic."""
    return f"sns/{region}/{account_id}/{topic_name}/Failure"


def logs_insights(region: str, log_group: str, query: str, since_seconds: int) -> str:
    """A Logs Insights page with the query, the log group and a relative time range filled in.

    The console reads its state from the fragment in its own encoding: a JSURL-like object whose strings
    are URI-encoded with % written as *, the whole escaped, prefixed, URI-encoded again, % written as $.
    """
    # Every step encodes character by character, so the part before the log group, the same for every
    # topic, is encoded once.
    fragment = _insights_head(query, since_seconds) + _encoded(_jsurl_text(log_group) + "))")
    return f"{placement.console(region)}/cloudwatch/home?region={region}#logsV2:logs-insights{fragment}"


@cache
def _insights_head(query: str, since_seconds: int) -> str:
    """The encoded fragment up to the log group: its state with an empty group, less the group's end."""
    state = {
        "end": 0,
        "start": -since_seconds,
        "timeType": "RELATIVE",
        "unit": "seconds",
        "editorString": query,
        "isLiveTail": False,
        "source": [""],
    }
    detail = "~" + _jsurl(state)
    empty_group = _jsurl_text("") + "))"
    assert detail.endswith(empty_group)
    return _encoded(detail.removesuffix(empty_group), prefix="?queryDetail=")


def _encoded(detail: str, prefix: str = "") -> str:
    escaped = quote(detail, safe="@*+/").replace("~", "%7E")  # JavaScript's escape(): quote keeps ~ unless told
    return quote(prefix + escaped, safe="-_.!~*'()").replace("%", "$")


def _jsurl(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return str(value)
    if isinstance(value, str):
        return _jsurl_text(value)
    if isinstance(value, list):
        return "(" + "".join(f"~{_jsurl(item)}" for item in value) + ")"
    return "(" + "~".join(f"{key}~{_jsurl(item)}" for key, item in value.items()) + ")"


@cache  # the same query goes into every failure-log link
def _jsurl_text(value: str) -> str:
    # ~ ( ) ' separate values in this form and * escapes: inside a string they must be escaped too.
    return "'" + quote(value, safe="-_.").replace("~", "%7E").replace("%", "*")
