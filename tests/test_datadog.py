"""Credentials and the API host from the environment: clear errors, and the keys never shown; broken answers."""

from __future__ import annotations

import contextlib
import socket
import threading
from collections.abc import Iterator
from dataclasses import replace

import pytest

from sync.core.kinds import MONITOR
from sync.datadog.client import Datadog, RequestFailed
from sync.datadog.credentials import Endpoint, endpoint
from sync.datadog.listing import last_page, listed, objects
from sync.errors import ObsError

from .fakedd import FakeDatadog

KEYS = {"DD_API_KEY": "api-secret-1", "DD_APP_KEY": "app-secret-2"}


def test_the_host_comes_from_the_environments_site() -> None:
    assert endpoint(KEYS, "datadoghq.eu", "prod").host == "https://api.datadoghq.eu"


def test_dd_host_overrides_the_site() -> None:
    assert (
        endpoint({**KEYS, "DD_HOST": "http://127.0.0.1:8126/"}, "datadoghq.com", "prod").host == "http://127.0.0.1:8126"
    )


@pytest.mark.parametrize(
    ("environ", "message"),
    [
        ({}, "DD_API_KEY and DD_APP_KEY are not set"),
        ({"DD_API_KEY": "x"}, "DD_APP_KEY is not set"),
        (
            {**KEYS, "DD_SITE": "datadoghq.eu"},
            "DD_SITE is 'datadoghq.eu' but environment 'prod' lives on 'datadoghq.com'",
        ),
        ({**KEYS, "DD_HOST": "api.datadoghq.com"}, "DD_HOST must be a base URL"),
        ({**KEYS, "DD_HOST": "https://user:hunter2@proxy.example.com"}, "without credentials"),
    ],
)
def test_bad_settings_are_clear_errors(environ: dict[str, str], message: str) -> None:
    with pytest.raises(ObsError, match=message) as caught:
        endpoint(environ, "datadoghq.com", "prod")
    assert not any(secret in str(caught.value) for secret in [*KEYS.values(), "hunter2"])


def test_a_matching_dd_site_is_fine_and_keys_stay_out_of_repr() -> None:
    target = endpoint({**KEYS, "DD_SITE": "datadoghq.com"}, "datadoghq.com", "prod")
    assert target == Endpoint("https://api.datadoghq.com", "api-secret-1", "app-secret-2")
    assert "secret" not in repr(target)


@pytest.fixture
def broken_then_whole() -> Iterator[str]:
    """An HTTP server whose first answer breaks off after the headers and part of the body; later ones are whole."""
    server = socket.create_server(("127.0.0.1", 0))
    body = b"[]"

    def serve() -> None:
        for attempt in range(2):
            try:
                connection, _ = server.accept()
            except OSError:  # the test is over and closed the server
                return
            with connection:
                connection.recv(65536)
                length = 100 if attempt == 0 else len(body)
                head = f"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {length}\r\n\r\n"
                connection.sendall(head.encode() + body[:1] if attempt == 0 else head.encode() + body)

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield f"127.0.0.1:{server.getsockname()[1]}"
    with contextlib.suppress(OSError):
        server.shutdown(socket.SHUT_RDWR)  # wakes the accept a test that made one request leaves waiting
    server.close()
    thread.join(timeout=5)


def test_an_answer_that_breaks_off_mid_body_is_retried_not_a_crash(broken_then_whole: str) -> None:
    dd = Datadog(Endpoint(f"http://{broken_then_whole}", "a", "b"), timeout=2, backoff=0.01)
    assert listed(dd, MONITOR, "prod") == []
    assert dd.retried == 1


def test_a_tls_failure_says_so(broken_then_whole: str) -> None:
    dd = Datadog(Endpoint(f"https://{broken_then_whole}", "a", "b"), timeout=2, attempts=1)
    with pytest.raises(RequestFailed, match="TLS failed"):
        listed(dd, MONITOR, "prod")


@pytest.mark.parametrize(
    ("length", "asked", "largest", "last"),
    [
        (0, 1000, 0, True),
        (49, 1000, 0, True),  # short: no trailing empty read
        (1000, 1000, 0, False),
        (100, 1000, 0, False),  # the API's default size: perhaps a cap below what was asked, read on
        (100, 1000, 100, False),
        (40, 1000, 100, True),
        (1, 1000, 1000, True),
        (1000, 1000, 1000, False),
    ],
)
def test_a_short_page_ends_a_list(length: int, asked: int, largest: int, last: bool) -> None:
    assert last_page(length, asked, largest) is last


@pytest.mark.parametrize("late", [0, 1, 3, 9])
@pytest.mark.parametrize("expected", [0, 5, 10, 23, 25, 40])
def test_pages_the_definitions_fill_are_read_at_once_with_the_same_objects_and_calls(expected: int, late: int) -> None:
    """Monitors listed 5 a page: 23 live make 5 pages (the last short ends the list). Asked for at once because
    the definitions expect them, the same objects come back in the same order, in as many calls, plus one per
    page an over-estimate asked for past the end. The expectation may come `late` (a plan reads while the
    definitions are expanded): the pages read by then are not asked for again."""
    small = replace(MONITOR, listing=replace(MONITOR.listing, size=5))
    with FakeDatadog() as fake:
        for index in range(23):
            fake.create_monitor({"name": f"m{index}", "type": "query alert", "query": "avg(last_5m):avg:x{*} > 1"})
        dd = Datadog(Endpoint(fake.url, fake.api_key, fake.app_key))
        one_by_one = objects(dd, small)
        calls = len(fake.log)
        fake.reset_log()
        asked = iter([*[None] * late, expected])
        at_once = objects(dd, small, expected=lambda: next(asked, expected))
        dd.close()
    assert [m["id"] for m in at_once] == [m["id"] for m in one_by_one] and len(one_by_one) == 23
    assert calls == 5
    pages = -(-expected // 5)
    assert len(fake.log) == (max(calls, pages) if pages - late >= 2 else calls)  # read ahead: two pages or more
