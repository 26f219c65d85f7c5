"""The Datadog keys and host from the environment: whitespace around a key is dropped, anything else odd in
one is refused without showing it, keys go in clear text only to this machine, and no error shows a key."""

from __future__ import annotations

from pathlib import Path

import pytest

from sync.cli.app import internal_error
from sync.datadog.credentials import endpoint
from sync.errors import ObsError

from .conftest import Obs
from .fakedd import FakeDatadog

API, APP = "0123456789abcdef0123456789abcdef", "fedcba9876543210fedcba9876543210fedcba98"


@pytest.mark.parametrize(
    ("api", "app"),
    [(API + "\n", APP), (API, APP + "\r"), (API + "\r\n", " " + APP + "\t"), ("\n" + API, APP + "\n\n")],
)
def test_whitespace_around_a_key_is_dropped(
    example_copy: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, api: str, app: str
) -> None:
    obs = Obs(example_copy, capsys)
    with FakeDatadog(api_key=API, app_key=APP) as dd:
        monkeypatch.setenv("DD_HOST", dd.url)
        monkeypatch.delenv("DD_SITE", raising=False)
        monkeypatch.setenv("DD_API_KEY", api)
        monkeypatch.setenv("DD_APP_KEY", app)
        for debug in ([], ["--debug"]):
            assert obs(*debug, "plan", "--env", "dev") == 0, obs.err
            assert API not in obs.out + obs.err and APP not in obs.out + obs.err
        assert dd.calls("GET", "/api/v2/downtime") == 2, "each plan read the org with the keys"


@pytest.mark.parametrize(
    ("name", "value", "said"),
    [
        (
            "DD_API_KEY",
            API[:10] + "\x07" + API[10:],
            "DD_API_KEY has a control, space or non-ASCII character at position 11",
        ),
        (
            "DD_APP_KEY",
            APP[:20] + "\x1b[2J" + APP[20:],
            "DD_APP_KEY has a control, space or non-ASCII character at position 21",
        ),
        (
            "DD_API_KEY",
            API[:16] + " " + API[16:],
            "DD_API_KEY has a control, space or non-ASCII character at position 17",
        ),
        ("DD_APP_KEY", APP + "\u2028", "DD_APP_KEY has a control, space or non-ASCII character at position 41"),
        ("DD_API_KEY", " \n\t", "DD_API_KEY is only whitespace"),
    ],
)
def test_a_key_with_any_other_odd_character_is_refused_without_showing_it(
    example_copy: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    name: str,
    value: str,
    said: str,
) -> None:
    obs = Obs(example_copy, capsys)
    monkeypatch.setenv("DD_API_KEY", API)
    monkeypatch.setenv("DD_APP_KEY", APP)
    monkeypatch.setenv("DD_HOST", "http://127.0.0.1:9")  # nothing listens there, and nothing is sent
    monkeypatch.setenv(name, value)
    for debug in ([], ["--debug"]):
        assert obs(*debug, "plan", "--env", "dev") == 1
        assert obs.err == f"error: {said}: set {name} to the key exactly as Datadog shows it\n"
        for fragment in (API[:8], API[-8:], APP[:8], APP[-8:]):
            assert fragment not in obs.out + obs.err


def test_an_internal_error_and_its_traceback_show_no_key() -> None:
    environ = {"DD_API_KEY": API + "\n", "DD_APP_KEY": APP}
    try:
        raise ValueError(f"Invalid header value {(API + chr(10)).encode()!r} next to {APP}")
    except ValueError as exc:
        for debug in (False, True):
            shown = internal_error(exc, debug=debug, environ=environ)
            assert "Invalid header value b'***" in shown and "next to ***" in shown
            assert API[:8] not in shown and APP[-8:] not in shown
        assert "Traceback (most recent call last)" in internal_error(exc, debug=True, environ=environ)


@pytest.mark.parametrize(
    "host",
    ["http://127.0.0.1:8126", "http://127.8.9.10", "http://localhost:8080", "http://[::1]:8126", "https://x.example"],
)
def test_plain_http_is_allowed_to_this_machine(host: str) -> None:
    assert endpoint({"DD_API_KEY": API, "DD_APP_KEY": APP, "DD_HOST": host}, "datadoghq.com", "prod").host == host


@pytest.mark.parametrize(
    "host",
    ["http://api.datadoghq.com", "http://10.0.0.5:8126", "http://localhost.example.com", "http://[::ffff:8.8.8.8]"],
)
def test_plain_http_to_another_host_is_refused(host: str) -> None:
    with pytest.raises(ObsError) as caught:
        endpoint({"DD_API_KEY": API, "DD_APP_KEY": APP, "DD_HOST": host}, "datadoghq.com", "prod")
    assert str(caught.value) == (
        f"DD_HOST {host} would send the keys unencrypted: http:// is only for a server on this machine "
        "(localhost, 127.0.0.1, ::1): use https://, e.g. https://api.datadoghq.com"
    )


def test_a_refused_key_is_told_the_scopes_obs_reads_with(
    obs: Obs, dd: FakeDatadog, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DD_APP_KEY", "an-application-key-of-another-org")
    assert obs("plan", "--env", "staging") == 1
    assert obs.err.startswith("error: could not read the live org: GET /api/")
    assert ": HTTP 403: Forbidden: check that DD_API_KEY and DD_APP_KEY belong to this org, and that the " in obs.err
    assert "application key has the scopes monitors_read, dashboards_read, slos_read and monitors_downtime (" in obs.err
    label = obs.err.split("could not read the live org: ")[1].split(":")[0]
    scope = {
        "/api/v2/downtime": "monitors_downtime",
        "/api/v1/slo": "slos_read",
        "/api/v1/monitor": "monitors_read",
        "/api/v1/dashboard": "dashboards_read",
    }
    assert f"({label} needs {scope[label.split(' ')[1]]})\n" in obs.err
