"""A proxy between obs and Datadog: HTML error pages in ISO-8859-1, some echoing the request's headers. Every
such answer is a clear, retried failure naming the status and the host, and no part of a key is ever shown."""

from __future__ import annotations

from collections import Counter

import pytest

from sync.cli.app import main
from sync.core.redaction import Redactor
from sync.datadog.answers import cut

from .conftest import Obs
from .fakedd import PROXY_PAGE, FakeDatadog

API_KEY = "0123456789abcdef0123456789abcdef"  # 32 characters, like a real API key
APP_KEY = "fedcba9876543210fedcba9876543210fedcba98"  # 40, like an application key


def fragments(secret: str, size: int = 8) -> set[str]:
    return {secret[i : i + size] for i in range(len(secret) - size + 1)}


@pytest.fixture
def proxied(monkeypatch: pytest.MonkeyPatch) -> FakeDatadog:
    fake = FakeDatadog(api_key=API_KEY, app_key=APP_KEY)
    monkeypatch.setenv("DD_API_KEY", API_KEY)
    monkeypatch.setenv("DD_APP_KEY", APP_KEY)
    return fake


def test_a_latin1_html_502_is_a_retried_failure_naming_status_and_host(
    obs: Obs, proxied: FakeDatadog, monkeypatch: pytest.MonkeyPatch
) -> None:
    with proxied as dd:
        monkeypatch.setenv("DD_HOST", dd.url)
        dd.faults.proxy_page_rate = 1.0
        code = obs("plan", "--env", "prod", "--timeout", "2", "--verbose")
        assert code == 1
        assert "internal error" not in obs.err and "UnicodeDecodeError" not in obs.err
        assert f"HTTP 502 from {dd.url}" in obs.err
        assert "not JSON (text/html" in obs.err
        # Five attempts at the list the error names; the others, read at once, stop trying when it fails.
        assert "GET /api/v1/slo: HTTP 502" in obs.err
        assert sum(r.status == PROXY_PAGE and r.path == "/api/v1/slo" for r in dd.log) == 5
        tried = Counter(r.path for r in dd.log)
        assert all(r.status == PROXY_PAGE for r in dd.log) and max(tried.values()) == 5, tried


def test_a_502_page_that_echoes_the_headers_shows_no_part_of_a_key(
    obs: Obs, proxied: FakeDatadog, monkeypatch: pytest.MonkeyPatch
) -> None:
    with proxied as dd:
        monkeypatch.setenv("DD_HOST", dd.url)
        dd.faults.proxy_page_rate, dd.faults.echo_headers = 1.0, True
        assert obs("sync", "--env", "prod", "--timeout", "2") == 1
    shown = obs.out + obs.err
    assert "HTTP 502" in shown
    for secret in (API_KEY, APP_KEY):
        leaked = [f for f in fragments(secret) if f in shown]
        assert not leaked, leaked


def test_sync_under_proxy_pages_converges_in_one_run(
    obs: Obs, proxied: FakeDatadog, monkeypatch: pytest.MonkeyPatch
) -> None:
    with proxied as dd:
        monkeypatch.setenv("DD_HOST", dd.url)
        # A create is tried three times: at 5% a create fails all three once in 8,000, so the example's 144
        # objects converge in one run (at 20% one in 125 failed, and a sync of 144 rarely converged).
        dd.faults.proxy_page_rate, dd.faults.echo_headers = 0.05, True
        code = obs("sync", "--env", "prod", "--timeout", "2")
        dd.faults.proxy_page_rate = 0.0
        assert code == 0, obs.out + obs.err
        assert main(["--definitions", str(obs.definitions), "plan", "--env", "prod", "--detailed-exitcode"]) == 0


@pytest.mark.parametrize("start", [0, 5, 290, 295, 299])
def test_a_key_is_redacted_before_the_text_is_cut(start: int) -> None:
    text = "x" * start + "DD-API-KEY: " + API_KEY + " and part " + APP_KEY[3:15] + " end" + "y" * 400
    shown = cut(Redactor([API_KEY, APP_KEY])(text))
    assert len(shown) <= 300
    for secret in (API_KEY, APP_KEY):
        assert not [f for f in fragments(secret) if f in shown]
    assert "***" in shown or start >= 288  # a cut may fall before the key
