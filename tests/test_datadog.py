"""Credentials and the API host from the environment: clear errors, and the keys never shown."""

from __future__ import annotations

import pytest

from sync.datadog import Endpoint, endpoint
from sync.errors import ObsError

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
    ],
)
def test_bad_settings_are_clear_errors(environ: dict[str, str], message: str) -> None:
    with pytest.raises(ObsError, match=message) as caught:
        endpoint(environ, "datadoghq.com", "prod")
    assert not any(secret in str(caught.value) for secret in KEYS.values())


def test_a_matching_dd_site_is_fine_and_keys_stay_out_of_repr() -> None:
    target = endpoint({**KEYS, "DD_SITE": "datadoghq.com"}, "datadoghq.com", "prod")
    assert target == Endpoint("https://api.datadoghq.com", "api-secret-1", "app-secret-2")
    assert "secret" not in repr(target)
