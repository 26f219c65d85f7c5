"""The fake's v2 downtimes through the real client: the spec's checks, and what the server fills in or rewrites."""

from __future__ import annotations

import json
import os
from contextlib import closing
from typing import Any

from datadog_api_client import ApiClient, Configuration
from datadog_api_client.v2.api.downtimes_api import DowntimesApi

from sync.core.kinds import DOWNTIME
from sync.datadog import listing
from sync.datadog.client import Datadog
from sync.datadog.credentials import endpoint
from tests.fakedd import FakeDatadog
from tests.test_fakedd import Reply, raw

TAGS = {"monitor_tags": ["queue:default", "env:prod"]}


def downtimes(dd: FakeDatadog) -> Any:
    config = Configuration(host=dd.url, api_key={"apiKeyAuth": dd.api_key, "appKeyAuth": dd.app_key})  # type: ignore[no-untyped-call]
    config.preload_content = False
    config.check_input_type = False
    return DowntimesApi(ApiClient(config))  # type: ignore[no-untyped-call]


def send(api: Any, method: str, path: str, body: Any = None) -> Reply:
    """A request as the client's REST layer sends it, for bodies its models would refuse before sending."""
    headers = {"DD-API-KEY": api.api_client.configuration.api_key["apiKeyAuth"]}
    headers["DD-APPLICATION-KEY"] = api.api_client.configuration.api_key["appKeyAuth"]
    if body is not None:
        headers["Content-Type"] = "application/json"
    host = api.api_client.configuration.host
    return raw(api.api_client.rest_client.request, method, host + path, headers=headers, body=body)


def create(api: Any, **attributes: Any) -> Reply:
    return send(api, "POST", "/api/v2/downtime", {"data": {"type": "downtime", "attributes": attributes}})


def test_a_create_is_answered_as_the_recorded_one_was(dd: FakeDatadog) -> None:
    api = downtimes(dd)
    reply = create(api, scope="*", monitor_identifier=TAGS, message="m", schedule={"start": None})
    assert reply.status == 200
    data = reply.body["data"]
    assert data["type"] == "downtime" and len(data["id"]) == 36 and data["id"].count("-") == 4  # a UUID
    attributes = data["attributes"]
    assert attributes["display_timezone"] == "UTC"
    assert attributes["mute_first_recovery_notification"] is False
    assert attributes["notify_end_types"] == ["expired"]
    assert sorted(attributes["notify_end_states"]) == ["alert", "no data", "warn"]
    assert attributes["status"] == "active" and attributes["canceled"] is None
    assert attributes["schedule"]["start"].endswith("+00:00") and attributes["schedule"]["end"] is None
    assert reply.body["data"]["relationships"]["created_by"]["data"]["type"] == "users"


def test_recurrences_get_a_start_and_the_current_occurrence(dd: FakeDatadog) -> None:
    api = downtimes(dd)
    schedule = {
        "recurrences": [{"rrule": "FREQ=DAILY;BYHOUR=1;BYMINUTE=0", "duration": "2h"}],
        "timezone": "Asia/Tokyo",
    }
    reply = create(api, scope="*", monitor_identifier=TAGS, schedule=schedule)
    assert reply.status == 200, reply.body
    shown = reply.body["data"]["attributes"]["schedule"]
    assert len(shown["recurrences"][0]["start"]) == len("2026-01-02T03:04")  # local, without an offset
    assert set(shown["current_downtime"]) == {"start", "end"}
    assert reply.body["data"]["attributes"]["status"] in ("active", "scheduled")


def test_the_order_of_the_end_states_changes_between_answers(dd: FakeDatadog) -> None:
    api = downtimes(dd)
    made = create(api, scope="*", monitor_identifier=TAGS).body["data"]["id"]
    orders = {
        tuple(send(api, "GET", f"/api/v2/downtime/{made}").body["data"]["attributes"]["notify_end_states"])
        for _ in range(3)
    }
    assert len(orders) > 1


def test_what_the_spec_refuses_is_refused(dd: FakeDatadog) -> None:
    api = downtimes(dd)
    daily = {"rrule": "FREQ=DAILY", "duration": "1h"}
    cases: dict[str, dict[str, Any]] = {
        "All values must have a key": {"scope": "prod", "monitor_identifier": TAGS},
        "monitor_identifier": {"scope": "*"},
        "duration": {
            "scope": "*",
            "monitor_identifier": TAGS,
            "schedule": {"recurrences": [{**daily, "duration": "1 hour"}]},
        },
        "rrule": {
            "scope": "*",
            "monitor_identifier": TAGS,
            "schedule": {"recurrences": [{**daily, "rrule": "FREQ=NEVER"}]},
        },
        "DTSTART": {
            "scope": "*",
            "monitor_identifier": TAGS,
            "schedule": {"recurrences": [{**daily, "rrule": "DTSTART:20270101T000000\nRRULE:FREQ=DAILY"}]},
        },
        "timezone": {
            "scope": "*",
            "monitor_identifier": TAGS,
            "schedule": {"recurrences": [daily], "timezone": "Mars/Base"},
        },
        "UTC offset of zero": {
            "scope": "*",
            "monitor_identifier": TAGS,
            "schedule": {"start": "2027-01-01T00:00:00+01:00"},
        },
        "after start": {
            "scope": "*",
            "monitor_identifier": TAGS,
            "schedule": {"start": "2027-01-02T00:00:00+00:00", "end": "2027-01-01T00:00:00+00:00"},
        },
    }
    for expected, attributes in cases.items():
        reply = create(api, **attributes)
        assert reply.status == 400, (expected, reply)
        assert expected.lower() in json.dumps(reply.body).lower(), (expected, reply.body)
    wrong_type = send(
        api,
        "POST",
        "/api/v2/downtime",
        {"data": {"type": "monitor", "attributes": {"scope": "*", "monitor_identifier": TAGS}}},
    )
    assert wrong_type.status == 400
    assert dd.downtimes == {}


def test_cancel_answers_204_and_the_downtime_stays_listed_as_canceled(dd: FakeDatadog) -> None:
    api = downtimes(dd)
    made = create(api, scope="*", monitor_identifier=TAGS).body["data"]["id"]
    response = api.cancel_downtime(made)
    assert response.status == 204 and response.data == b""
    listed = send(api, "GET", "/api/v2/downtime").body["data"]
    assert [d["attributes"]["status"] for d in listed] == ["canceled"]
    assert send(api, "GET", "/api/v2/downtime/00000000-0000-1234-0000-000000000000").status == 404
    with closing(Datadog(endpoint(os.environ, "datadoghq.com", "prod"))) as client:
        assert listing.objects(client, DOWNTIME) == []  # obs reads past canceled downtimes


def test_a_patch_must_name_the_downtime_of_its_path(dd: FakeDatadog) -> None:
    api = downtimes(dd)
    made = create(api, scope="*", monitor_identifier=TAGS, message="a").body["data"]["id"]
    body = {"data": {"type": "downtime", "id": made, "attributes": {"message": "b"}}}
    assert send(api, "PATCH", f"/api/v2/downtime/{made}", body).body["data"]["attributes"]["message"] == "b"
    other = {"data": {"type": "downtime", "id": "0000", "attributes": {"message": "c"}}}
    assert send(api, "PATCH", f"/api/v2/downtime/{made}", other).status == 400
    assert (
        send(api, "PATCH", f"/api/v2/downtime/{made}", {"data": {"type": "downtime", "attributes": {}}}).status == 400
    )


def test_the_list_pages_by_offset_and_limit_and_obs_reads_it_in_few_calls(dd: FakeDatadog) -> None:
    for index in range(135):
        dd.create_downtime({"scope": "*", "monitor_identifier": TAGS, "message": f"by hand {index}"})
    api = downtimes(dd)
    assert len(send(api, "GET", "/api/v2/downtime").body["data"]) == 30  # the spec's default page
    page = send(api, "GET", "/api/v2/downtime?page%5Boffset%5D=120&page%5Blimit%5D=100").body
    assert len(page["data"]) == 15 and page["meta"]["page"]["total_filtered_count"] == 135
    dd.reset_log()
    with closing(Datadog(endpoint(os.environ, "datadoghq.com", "prod"))) as client:
        assert len(listing.objects(client, DOWNTIME)) == 135
    assert dd.calls("GET", "/api/v2/downtime") == 2  # 100, then a short page of 35
