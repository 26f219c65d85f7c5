"""The fake Datadog server, through the real client: it answers as the recorded API did, and its faults show."""

from __future__ import annotations

import contextlib
import json
import re
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple
from urllib.parse import parse_qs, urlsplit

import pytest
import urllib3
from datadog_api_client import ApiClient, Configuration
from datadog_api_client.exceptions import ApiException, ForbiddenException, ServiceException
from datadog_api_client.v1.api.dashboards_api import DashboardsApi
from datadog_api_client.v1.api.monitors_api import MonitorsApi

from tests.fakedd import LOST_RESPONSE, TIMED_OUT, FakeDatadog, Faults, Rejected, Request

RECORDED = sorted((Path(__file__).parent / "fixtures" / "recorded").glob("*.json"))
_SOURCE = re.compile(r"\((GET|POST|PUT|DELETE) (\S+), HTTP \d+\)$")
# Fields the server sets anew each time: compared for presence only.
_VOLATILE = {
    *("created", "created_at", "modified", "modified_at", "overall_state_modified"),
    *("creator", "org_id", "author_handle", "author_name"),
}
# The recordings span 2021-2026: newer servers added these to monitors, older ones added those to dashboards.
_NEWER_ONLY = {"assets", "restriction_policy"}
_OLDER_ONLY = {"is_read_only", "restricted_roles"}
QUERY = "avg(last_5m):avg:aws.sqs.approximate_age_of_oldest_message{queuename:orders} > 300"


class Reply(NamedTuple):
    status: int
    body: Any
    headers: dict[str, str]


@dataclass
class Api:
    monitors: Any  # MonitorsApi: typed for models, but it takes the plain dicts a sync sends
    dashboards: Any  # DashboardsApi


@contextlib.contextmanager
def connect(dd: FakeDatadog, keys: tuple[str, str] | None = None, **settings: Any) -> Iterator[Api]:
    """The real client pointed at the fake; settings go to Configuration (preload_content=False gives raw replies)."""
    api_key, app_key = keys or (dd.api_key, dd.app_key)
    config = Configuration(host=dd.url, api_key={"apiKeyAuth": api_key, "appKeyAuth": app_key}, **settings)  # type: ignore[no-untyped-call]
    with ApiClient(config) as client:
        yield Api(MonitorsApi(client), DashboardsApi(client))  # type: ignore[no-untyped-call]


def raw(call: Callable[..., Any], *args: Any, **kwargs: Any) -> Reply:
    """Status, JSON body and headers of a call by a client made with preload_content=False."""
    try:
        response = call(*args, **kwargs)
    except ApiException as error:
        return Reply(error.status, error.body, error.headers)
    try:
        return Reply(response.status, json.loads(response.data), dict(response.headers))
    finally:
        response.release_conn()


def rest(api: Api, dd: FakeDatadog, method: str, path: str, body: Any = None, keys: bool = True) -> Reply:
    """A request through the client's REST layer, for what its models would refuse before sending."""
    headers = {"DD-API-KEY": dd.api_key, "DD-APPLICATION-KEY": dd.app_key} if keys else {}
    if body is not None:
        headers["Content-Type"] = "application/json"
    return raw(api.monitors.api_client.rest_client.request, method, dd.url + path, headers=headers, body=body)


def monitor(name: str = "age", tags: tuple[str, ...] = (), query: str = QUERY, **extra: Any) -> dict[str, Any]:
    body = {"type": "query alert", "name": name, "query": query, "message": "m", "tags": list(tags)}
    return {**body, "options": {"thresholds": {"critical": 300}}, **extra}


def dashboard(title: str = "Queues", **extra: Any) -> dict[str, Any]:
    note = {"definition": {"type": "note", "content": "hello"}}
    group = {"definition": {"type": "group", "layout_type": "ordered", "widgets": [note, {**note, "id": 7}]}}
    return {"title": title, "layout_type": "ordered", "widgets": [note, group], **extra}


# -- recorded exchanges


def _load(path: Path) -> dict[str, Any]:
    exchange: dict[str, Any] = json.loads(path.read_text())
    return exchange


def _cassette(path: Path) -> tuple[str, int]:
    name, number = path.stem.rsplit("-", 1)
    return name, int(number)


def _replace_all(text: str, ids: dict[str, str]) -> str:
    for recorded, ours in ids.items():
        text = text.replace(recorded, ours)
    return text


def _send(api: Api, exchange: dict[str, Any], ids: dict[str, str]) -> Reply:
    found = _SOURCE.search(exchange["source"])
    assert found, exchange["source"]
    method, target = found.groups()
    url = urlsplit(_replace_all(target, ids))
    parts = url.path.strip("/").split("/")  # api, v1, kind, [id]
    kind, key = parts[2], parts[3] if len(parts) > 3 else None
    body = exchange["request"]
    if kind == "dashboard":
        body = body and {k: v for k, v in body.items() if k != "id"}  # the client refuses it; the API ignored it
        calls = {"GET": api.dashboards.get_dashboard, "DELETE": api.dashboards.delete_dashboard}
        if key is None:
            return raw(api.dashboards.create_dashboard, body=body)
        if method == "PUT":
            return raw(api.dashboards.update_dashboard, key, body=body)
        return raw(calls[method], key)
    if key is None and method == "GET":
        query = {k: int(v[-1]) if v[-1].isdigit() else v[-1] for k, v in parse_qs(url.query).items()}
        return raw(api.monitors.list_monitors, **query)
    if key is None:
        return raw(api.monitors.create_monitor, body=body)
    if method == "PUT":
        return raw(api.monitors.update_monitor, int(key), body=body)
    return raw({"GET": api.monitors.get_monitor, "DELETE": api.monitors.delete_monitor}[method], int(key))


def _seed_listed(dd: FakeDatadog, exchanges: list[dict[str, Any]]) -> dict[str, str]:
    """Create the monitors that recorded list pages show, in id order; recorded id -> ours."""
    listed = {m["id"]: m for e in exchanges if isinstance(e["response"], list) for m in e["response"]}
    ids = {}
    for recorded_id, item in sorted(listed.items()):
        writable = ("type", "name", "message", "tags", "query", "priority", "restricted_roles")
        options = {k: v for k, v in item["options"].items() if k != "silenced"}
        body = {k: item[k] for k in writable} | {"options": options}
        ids[str(recorded_id)] = str(dd.create_monitor(body)["id"])
    return ids


def _stable(value: Any) -> Any:
    """Server-set values replaced by a marker, so only their presence is compared."""
    if isinstance(value, list):
        return [_stable(v) for v in value]
    if not isinstance(value, dict):
        return value
    widget = "definition" in value  # widget ids are the server's own
    return {k: "<server>" if k in _VOLATILE or (widget and k == "id") else _stable(v) for k, v in value.items()}


def _same_era(recorded: Any, replayed: Any) -> tuple[Any, Any]:
    """Both sides without the fields of another server version (see _NEWER_ONLY and _OLDER_ONLY)."""
    if isinstance(recorded, list) and isinstance(replayed, list) and len(recorded) == len(replayed):
        pairs = [_same_era(a, b) for a, b in zip(recorded, replayed, strict=True)]
        return [a for a, _ in pairs], [b for _, b in pairs]
    if isinstance(recorded, dict) and isinstance(replayed, dict):
        new = {k for k in _NEWER_ONLY if k not in recorded}
        old = {k for k in _OLDER_ONLY if k not in replayed}
        return {k: v for k, v in recorded.items() if k not in old}, {k: v for k, v in replayed.items() if k not in new}
    return recorded, replayed


@pytest.mark.parametrize("path", RECORDED, ids=[p.stem for p in RECORDED])
def test_a_recorded_exchange_gets_the_recorded_answer(path: Path) -> None:
    """Replays the cassette up to this exchange (recorded ids mapped to ours) and compares the last answer."""
    name, number = _cassette(path)
    chain = sorted((p for p in RECORDED if _cassette(p)[0] == name and _cassette(p)[1] <= number), key=_cassette)
    exchanges = [_load(p) for p in chain]
    with FakeDatadog() as dd, connect(dd, preload_content=False) as api:
        ids = _seed_listed(dd, [_load(p) for p in RECORDED if _cassette(p)[0] == name])
        for exchange in exchanges:
            reply = _send(api, exchange, ids)
            assert reply.status == exchange["status"], reply.body
            if exchange["method"] == "POST" and reply.status == 200:
                ids[str(exchange["response"]["id"])] = str(reply.body["id"])
    recorded = json.loads(_replace_all(json.dumps(exchanges[-1]["response"]), ids))
    expected, got = _same_era(_stable(recorded), _stable(reply.body))
    assert got == expected
    assert json.dumps(got, sort_keys=True) == json.dumps(expected, sort_keys=True)  # 2 == 2.0, but "2" != "2.0"


# -- authentication


@pytest.mark.parametrize("which", ["api key", "application key"])
def test_a_wrong_key_is_forbidden(which: str) -> None:
    with FakeDatadog() as dd:
        keys = {"api key": ("wrong", dd.app_key), "application key": (dd.api_key, "wrong")}[which]
        with connect(dd, keys) as api, pytest.raises(ForbiddenException) as raised:
            api.monitors.create_monitor(body=monitor())
        assert (raised.value.status, raised.value.body) == (403, {"errors": ["Forbidden"]})
        assert dd.monitors == {}
        assert [r.status for r in dd.log] == [403]


def test_missing_keys_are_forbidden() -> None:
    with FakeDatadog() as dd, connect(dd) as api:
        assert rest(api, dd, "POST", "/api/v1/monitor", monitor(), keys=False)[:2] == (403, {"errors": ["Forbidden"]})
        assert dd.monitors == {}


def test_keys_given_at_construction_are_the_valid_ones() -> None:
    with FakeDatadog(api_key="a" * 32, app_key="b" * 40) as dd, connect(dd, ("a" * 32, "b" * 40)) as api:
        assert api.monitors.list_monitors() == []


# -- monitor list


def test_list_filters_by_own_tags_scope_name_and_id_offset() -> None:
    with FakeDatadog() as dd, connect(dd, preload_content=False) as api:
        a = dd.create_monitor(monitor("Orders age", ("managed-by:obs", "env:prod")))["id"]
        b = dd.create_monitor(monitor("orders depth", ("managed-by:obs", "env:dev")))["id"]
        c = dd.create_monitor(monitor("Billing age", ("env:prod",), QUERY.replace("orders", "billing")))["id"]

        def ids(**query: Any) -> list[int]:
            reply = raw(api.monitors.list_monitors, **query)
            assert reply.status == 200, reply.body
            assert all(m["matching_downtimes"] == [] for m in reply.body)
            return [m["id"] for m in reply.body]

        assert ids() == [a, b, c]
        assert ids(monitor_tags="managed-by:obs") == [a, b]
        assert ids(monitor_tags="managed-by:obs,env:prod") == [a]  # every tag must match
        assert ids(tags="queuename:billing") == [c]  # scope: tags inside the query
        assert ids(name="ORDERS") == [a, b]
        assert ids(id_offset=a) == [b, c]
        assert ids(page=0, page_size=2) == [a, b]
        assert ids(page=1, page_size=2) == [c]
        assert ids(page=0) == [a, b, c]  # page_size defaults to 100
        assert rest(api, dd, "GET", "/api/v1/monitor?page=0&page_size=1001").status == 400  # the client checks too


def test_list_with_pagination_reads_every_page() -> None:
    with FakeDatadog() as dd, connect(dd) as api:
        created = [dd.create_monitor(monitor(f"m{i}"))["id"] for i in range(5)]
        assert [m.id for m in api.monitors.list_monitors_with_pagination(page_size=2)] == created
        assert [r.query["page"] for r in dd.log] == [["0"], ["1"], ["2"]]


# -- monitor writes


def test_validate_answers_an_empty_object_and_writes_nothing() -> None:
    with FakeDatadog() as dd, connect(dd, preload_content=False) as api:
        existing = dd.create_monitor(monitor())["id"]
        assert raw(api.monitors.validate_monitor, body=monitor())[:2] == (200, {})
        assert raw(api.monitors.validate_existing_monitor, existing, body=monitor()).body == {}
        wrong = monitor(options={"thresholds": {"critical": 90}})
        reply = raw(api.monitors.validate_monitor, body=wrong)
        expected = ["Alert threshold (90.0) does not match that used in the query (300.0)."]
        assert (reply.status, reply.body) == (400, {"errors": expected})
        assert raw(api.monitors.validate_existing_monitor, existing + 1, body=monitor()).status == 404
        assert list(dd.monitors) == [existing]


@pytest.mark.parametrize(
    ("body", "error"),
    [
        (monitor(frobnicate=1), "frobnicate: unknown key"),
        (
            monitor(options={"thresholds": {"critical": 300}, "evaluation_dela": 900}),
            "options.evaluation_dela: unknown key",
        ),
        (monitor(type="bogus alert"), "type: 'bogus alert' is not an allowed value"),
        (monitor(options={"notification_preset_name": "nope"}), "options.notification_preset_name: 'nope' is not"),
        (
            monitor(options={"thresholds": {"critical": 90}}),
            "Alert threshold (90.0) does not match that used in the query (300.0).",
        ),
        (monitor(options={"thresholds": {"warning": 200}}), "Alert status is required."),
        (monitor(query=QUERY.replace(" > ", "\n> ")), "The value provided for parameter 'query' is invalid"),
        (monitor(query="avg(last_5m):avg:aws.sqs.sent{*}"), "invalid operator specified: "),
    ],
    ids=[
        "unknown key",
        "unknown option",
        "bad type",
        "bad enum",
        "threshold",
        "warning alone",
        "newline",
        "no operator",
    ],
)
def test_a_monitor_the_api_refuses_is_answered_400_naming_the_problem(body: dict[str, Any], error: str) -> None:
    with FakeDatadog() as dd, connect(dd) as api, pytest.raises(ApiException) as raised:
        api.monitors.create_monitor(body=body)
    assert raised.value.status == 400
    assert any(error in e for e in raised.value.body["errors"]), raised.value.body
    assert dd.monitors == {}


def test_read_only_fields_are_refused_in_a_monitor_and_ignored_in_a_dashboard() -> None:
    """The client refuses them itself, so these go through its REST layer; only the dashboard case is recorded."""
    with FakeDatadog() as dd, connect(dd) as api:
        refused = rest(api, dd, "POST", "/api/v1/monitor", {**monitor(), "id": 5})
        assert refused[:2] == (400, {"errors": ["id: is a read-only field"]})
        created = rest(api, dd, "POST", "/api/v1/dashboard", {**dashboard(), "id": "x", "url": "/x"})
        assert created.status == 200 and created.body["id"] != "x"
        assert created.body["url"] == f"/dashboard/{created.body['id']}/queues"


def test_create_rewrites_as_the_api_does() -> None:
    with FakeDatadog() as dd:
        created = dd.create_monitor(
            {
                "type": "metric alert",
                "name": " Orders age \n",
                "query": QUERY.replace("{queuename:orders}", "{queuename:orders} by {region}") + "\n",
                "tags": ["Team:Payments"],
                "priority": 0,
                "options": {"thresholds": {"critical": 300, "warning": None}, "escalation_message": " x "},
            }
        )
        assert created["type"] == "query alert"
        assert (created["name"], created["options"]["escalation_message"]) == ("Orders age", "x")
        assert created["query"].endswith("> 300") and created["multi"] is True
        assert (created["tags"], created["priority"], created["restricted_roles"]) == (["team:payments"], None, None)
        assert json.dumps(created["options"]["thresholds"]) == '{"critical": 300.0}'
        assert {k: created["options"][k] for k in ("notify_audit", "notify_no_data", "include_tags", "silenced")} == {
            "notify_audit": False,
            "notify_no_data": False,
            "include_tags": True,
            "silenced": {},
        }
        assert (created["options"]["new_host_delay"], created["overall_state"], created["deleted"]) == (
            300,
            "No Data",
            None,
        )
        stored = dd.monitors[created["id"]]
        assert "restriction_policy" in created and "restriction_policy" not in stored  # recorded: GET lacks it
        variable = {"data_source": "metrics", "name": "q", "query": "avg:aws.sqs.sent{*}"}
        formula = dd.create_monitor(monitor(options={"variables": [variable], "thresholds": {"critical": 300}}))
        assert formula["type"] == "metric alert"


def test_put_keeps_omitted_fields_and_replaces_options() -> None:
    with FakeDatadog() as dd, connect(dd, preload_content=False) as api:
        options = {"thresholds": {"critical": 300, "warning": 200}, "escalation_message": "up", "new_host_delay": 600}
        created = dd.create_monitor(monitor(options=options))
        time.sleep(0.001)
        reply = raw(
            api.monitors.update_monitor,
            created["id"],
            body={"name": "renamed", "options": {"thresholds": {"critical": 300}, "timeout_h": None}},
        )
        assert reply.status == 200, reply.body
        updated = reply.body
        assert (updated["name"], updated["message"], updated["query"]) == ("renamed", "m", QUERY)
        assert updated["options"] == {
            "thresholds": {"critical": 300.0},
            "timeout_h": None,
            "notify_audit": False,
            "notify_no_data": False,
            "include_tags": True,
            "silenced": {},
        }
        assert updated["modified"] > created["modified"] and updated["created"] == created["created"]
        assert "creator" not in updated  # recorded
        assert raw(api.monitors.get_monitor, created["id"]).body == dd.monitors[created["id"]]


def test_a_monitor_type_cannot_change() -> None:
    with FakeDatadog() as dd, connect(dd) as api:
        created = dd.create_monitor(monitor())
        api.monitors.update_monitor(created["id"], body={"type": "metric alert"})  # the same type, as sent on create
        with pytest.raises(ApiException) as raised:
            api.monitors.update_monitor(created["id"], body={"type": "log alert"})
        assert raised.value.status == 400 and "type cannot be changed" in raised.value.body["errors"][0]


def test_deleting_a_missing_monitor_is_not_found() -> None:
    with FakeDatadog() as dd, connect(dd, preload_content=False) as api:
        assert raw(api.monitors.delete_monitor, 1)[:2] == (404, {"errors": ["Monitor not found"]})


# -- dashboards


def test_dashboards_create_get_list_update_delete() -> None:
    with FakeDatadog() as dd, connect(dd, preload_content=False) as api:
        reply = raw(api.dashboards.create_dashboard, body=dashboard("Orders: age & depth_p99"))
        assert reply.status == 200, reply.body
        created = reply.body
        key = created["id"]
        assert re.fullmatch(r"[a-z0-9]{3}-[a-z0-9]{3}-[a-z0-9]{3}", key)
        assert created["url"] == f"/dashboard/{key}/orders-age--depthp99"
        assert (created["description"], created["notify_list"], created["template_variables"]) == (None, None, None)
        note, group = created["widgets"]
        inner = group["definition"]["widgets"]
        assert all(isinstance(w["id"], int) for w in (note, group, *inner)) and inner[1]["id"] == 7  # sent ids kept
        assert raw(api.dashboards.get_dashboard, key).body == created == dd.dashboards[key]

        second = dd.create_dashboard(dashboard("Second"))["id"]
        summaries = raw(api.dashboards.list_dashboards).body["dashboards"]
        assert [s["id"] for s in summaries] == [key, second]
        assert set(summaries[0]) == {
            *("id", "title", "description", "layout_type", "url", "is_read_only"),
            *("created_at", "modified_at", "author_handle", "deleted_at"),
        }
        assert [s["id"] for s in raw(api.dashboards.list_dashboards, count=1, start=1).body["dashboards"]] == [second]

        replacement = {"title": "Renamed", "layout_type": "ordered", "widgets": [{**note, "id": note["id"]}, group]}
        updated = raw(api.dashboards.update_dashboard, key, body=replacement).body
        assert updated["url"] == f"/dashboard/{key}/renamed" and updated["created_at"] == created["created_at"]
        assert updated["widgets"][0]["id"] == note["id"]  # re-sent id kept
        assert updated["widgets"][1]["id"] == group["id"]  # sent back as read: kept too
        fresh = raw(api.dashboards.update_dashboard, key, body={**replacement, "widgets": [dashboard()["widgets"][0]]})
        assert fresh.body["widgets"][0]["id"] != note["id"]  # sent without an id: a new one
        assert "description" in fresh.body and fresh.body["description"] is None  # full replace

        assert raw(api.dashboards.delete_dashboard, key).body == {"deleted_dashboard_id": key}
        assert raw(api.dashboards.get_dashboard, key)[:2] == (404, {"errors": [f"Dashboard with ID {key} not found"]})
        assert [d.id for d in api.dashboards.list_dashboards_with_pagination(count=1)] == [second]


@pytest.mark.parametrize(
    ("extra", "error"),
    [
        ({"tags": ["env:prod"]}, "Invalid tag format. Valid tag keys are: team."),
        ({"tags": [f"team:t{i}" for i in range(6)]}, "number of items must be less than or equal to `5`"),
        ({"template_variables": [{"name": "q", "default": "a", "defaults": ["a"]}]}, "'template_variables' is invalid"),
        (
            {"template_variables": [{"name": "q", "defaults": [""]}]},
            "Minimum length of parameter 'defaults' should be 1",
        ),
        ({"layout_type": "grid"}, "layout_type: 'grid' is not an allowed value"),
        (
            {"widgets": [{"definition": {"type": "note", "content": "x", "colour": 1}}]},
            "widgets[0].definition.colour: unknown key",
        ),
    ],
    ids=["tag key", "six tags", "default and defaults", "empty default", "bad enum", "unknown widget key"],
)
def test_a_dashboard_the_api_refuses_is_answered_400(extra: dict[str, Any], error: str) -> None:
    with FakeDatadog() as dd, connect(dd) as api:
        reply = rest(api, dd, "POST", "/api/v1/dashboard", dashboard(**extra))  # the client would refuse six tags
    assert reply.status == 400
    assert any(error in e for e in reply.body["errors"]), reply.body
    assert dd.dashboards == {}


# -- rate limits


def test_without_a_limit_the_headers_are_still_sent() -> None:
    with FakeDatadog() as dd, connect(dd, preload_content=False) as api:
        headers = raw(api.monitors.list_monitors).headers
    assert {k: v for k, v in headers.items() if k.startswith("X-RateLimit")} == {
        "X-RateLimit-Limit": "1000000",
        "X-RateLimit-Period": "10",
        "X-RateLimit-Remaining": "999999",
        "X-RateLimit-Reset": headers["X-RateLimit-Reset"],
        "X-RateLimit-Name": "monitor_reads",
    }
    assert 1 <= int(headers["X-RateLimit-Reset"]) <= 10


def test_a_spent_budget_answers_429_until_the_reset_a_retrying_client_waits_for() -> None:
    with FakeDatadog(Faults(rate_limit=2, rate_period=1.0)) as dd, connect(dd, preload_content=False) as api:
        replies = [raw(api.monitors.list_monitors) for _ in range(3)]
        assert [r.status for r in replies] == [200, 200, 429]
        assert replies[2].body == {"errors": ["Rate limit exceeded"]}
        assert [r.headers["X-RateLimit-Remaining"] for r in replies] == ["1", "0", "0"]
        limited = replies[2].headers
        assert (limited["X-RateLimit-Limit"], limited["X-RateLimit-Period"], limited["X-RateLimit-Reset"]) == (
            "2",
            "1",
            "1",
        )
        assert raw(api.dashboards.list_dashboards).status == 200  # another group has its own budget
        with connect(dd, enable_retry=True) as retrying:
            started = time.monotonic()
            assert retrying.monitors.list_monitors() == []
            assert time.monotonic() - started >= 0.5  # it slept X-RateLimit-Reset seconds, into the next window
        assert [r.status for r in dd.log] == [200, 200, 429, 200, 429, 200]


# -- faults


def test_throttling_answers_429_whatever_the_budget() -> None:
    with FakeDatadog(Faults(throttle_rate=1.0)) as dd, connect(dd, preload_content=False) as api:
        reply = raw(api.monitors.create_monitor, body=monitor())
    assert (reply.status, reply.body, "X-RateLimit-Reset" in reply.headers) == (
        429,
        {"errors": ["Rate limit exceeded"]},
        True,
    )
    assert dd.monitors == {}


def test_a_server_error_does_nothing_and_stops_when_switched_off() -> None:
    with FakeDatadog(Faults(error_rate=1.0)) as dd, connect(dd) as api:
        with pytest.raises(ServiceException) as raised:
            api.monitors.create_monitor(body=monitor())
        assert raised.value.status in (500, 502, 503)
        assert raised.value.body == {"errors": ["Internal Server Error"]}
        assert dd.monitors == {}
        dd.faults.error_rate = 0
        assert api.monitors.create_monitor(body=monitor()).id in dd.monitors


def test_the_same_seed_gives_the_same_faults() -> None:
    def statuses() -> list[int | None]:
        with FakeDatadog(Faults(error_rate=0.5, seed=7)) as dd, connect(dd, preload_content=False) as api:
            for _ in range(12):
                raw(api.monitors.list_monitors)
            return [r.status for r in dd.log]

    first = statuses()
    assert first == statuses()
    assert 200 in first and set(first) - {200}  # some of each


def test_a_lost_response_is_a_connection_error_after_the_write() -> None:
    with FakeDatadog(Faults(lost_response_rate=1.0)) as dd, connect(dd) as api:
        with pytest.raises(urllib3.exceptions.ProtocolError):
            api.monitors.create_monitor(body=monitor())
        assert len(dd.monitors) == 1
        assert api.monitors.list_monitors()[0].id in dd.monitors  # reads are never lost
        [created] = dd.monitors
        # urllib3 re-sends an idempotent method whose answer was lost (3 retries by default): four PUTs arrive.
        with pytest.raises(urllib3.exceptions.MaxRetryError):
            api.monitors.update_monitor(created, body={"name": "renamed"})
        assert dd.monitors[created]["name"] == "renamed"
        assert [(r.method, r.status) for r in dd.log] == [("POST", LOST_RESPONSE), ("GET", 200)] + [
            ("PUT", LOST_RESPONSE)
        ] * 4


def test_a_timeout_hangs_then_drops_without_doing_anything() -> None:
    faults = Faults(timeout_rate=1.0, timeout_seconds=0.5)
    with FakeDatadog(faults) as dd, connect(dd, request_timeout=0.1) as api:
        started = time.monotonic()
        with pytest.raises(urllib3.exceptions.ReadTimeoutError):
            api.monitors.create_monitor(body=monitor())
        assert time.monotonic() - started < 0.5
        assert dd.monitors == {}
        assert [r.status for r in dd.log] == [TIMED_OUT]


def test_latency_delays_every_request() -> None:
    with FakeDatadog(Faults(latency=0.05)) as dd, connect(dd) as api:
        started = time.monotonic()
        api.monitors.list_monitors()
        assert time.monotonic() - started >= 0.05


# -- the server itself


def test_concurrent_clients_each_get_their_own_monitors() -> None:
    with FakeDatadog() as dd:

        def create(worker: int) -> list[int]:
            with connect(dd) as api:
                return [api.monitors.create_monitor(body=monitor(f"w{worker}-{i}")).id for i in range(5)]

        with ThreadPoolExecutor(8) as pool:
            ids = [i for batch in pool.map(create, range(8)) for i in batch]
        assert sorted(ids) == sorted(dd.monitors) and len(set(ids)) == 40
        assert dd.calls("POST", "/api/v1/monitor") == 40


def test_requests_share_one_keep_alive_connection() -> None:
    with FakeDatadog() as dd, connect(dd) as api:
        for _ in range(3):
            api.monitors.create_monitor(body=monitor())
            api.dashboards.list_dashboards()
        pool = api.monitors.api_client.rest_client.pool_manager.connection_from_url(dd.url)
        assert pool.num_connections == 1 and pool.num_requests == 6


def test_the_log_counts_and_resets() -> None:
    with FakeDatadog() as dd, connect(dd) as api:
        api.monitors.list_monitors()
        api.dashboards.list_dashboards()
        assert rest(api, dd, "GET", "/api/v1/nothing").status == 404
        assert dd.log[0] == Request("GET", "/api/v1/monitor", {}, 200)
        assert (dd.calls(), dd.calls("GET", "/api/v1/dashboard"), dd.calls("POST")) == (3, 1, 0)
        dd.reset_log()
        assert (dd.log, dd.calls()) == ([], 0)


def test_a_person_in_the_ui_changes_things_without_http_or_faults() -> None:
    with FakeDatadog(Faults(error_rate=1.0)) as dd:
        created = dd.create_monitor(monitor())
        updated = dd.update_monitor(created["id"], {"message": "changed by hand"})
        assert (updated["message"], dd.monitors[created["id"]]["message"]) == ("changed by hand", "changed by hand")
        board = dd.create_dashboard(dashboard())
        assert dd.update_dashboard(board["id"], dashboard("Renamed"))["title"] == "Renamed"
        with pytest.raises(Rejected) as raised:
            dd.create_monitor(monitor(frobnicate=1))
        assert (raised.value.status, raised.value.errors) == (400, ["frobnicate: unknown key"])
        dd.delete_monitor(created["id"])
        dd.delete_dashboard(board["id"])
        assert (dd.monitors, dd.dashboards, dd.log) == ({}, {}, [])
