"""Where obs sends its requests and the keys it sends, from the conventional environment variables."""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from sync.errors import ObsError

API_KEY, APP_KEY, SITE, HOST = "DD_API_KEY", "DD_APP_KEY", "DD_SITE", "DD_HOST"


@dataclass(frozen=True)
class Endpoint:
    """Where to send requests and the keys to send; the keys never appear in repr, output or errors."""

    host: str
    api_key: str = field(repr=False)
    app_key: str = field(repr=False)


def endpoint(environ: Mapping[str, str], site: str, env_name: str, without: str = "") -> Endpoint:
    """Credentials and API host from the conventional variables; DD_HOST overrides the site. `without` is
    what the command can do without credentials, for the hint when they are missing (each command says its
    own: a hint must not name an option the command lacks)."""
    missing = [name for name in (API_KEY, APP_KEY) if not environ.get(name)]
    if missing:
        raise ObsError.of(
            f"{' and '.join(missing)} {'is' if len(missing) == 1 else 'are'} not set",
            f"export an API key and an application key of the Datadog org of {env_name!r}"
            + (f", or {without}" if without else ""),
        )
    keys = [key(environ, name) for name in (API_KEY, APP_KEY)]
    host = environ.get(HOST, "").strip().rstrip("/")
    if host and (not host.startswith(("http://", "https://")) or "@" in host):
        # No user:password@ either: the host is printed with every plan.
        raise ObsError.of(f"{HOST} must be a base URL such as https://api.{site}, without credentials")
    if host.startswith("http://") and not _loopback(host):
        raise ObsError.of(
            f"{HOST} {host} would send the keys unencrypted: http:// is only for a server on this machine "
            "(localhost, 127.0.0.1, ::1)",
            f"use https://, e.g. https://api.{site}",
        )
    chosen = environ.get(SITE, "").strip()
    if not host and chosen and chosen != site:
        # A global DD_SITE must not send one environment's monitors to another org.
        raise ObsError.of(
            f"{SITE} is {chosen!r} but environment {env_name!r} lives on {site!r} (its datadog.site)",
            f"unset {SITE}, or correct datadog.site in environments/{env_name}.yaml",
        )
    return Endpoint(host or f"https://api.{site}", *keys)


def key(environ: Mapping[str, str], name: str) -> str:
    """A key without the whitespace around it (a secret saved from a file ends with a newline); any other
    character that no key has is refused, naming its position only: the message must show no key byte."""
    value = environ[name].strip(" \t\r\n\f\v")
    fix = f"set {name} to the key exactly as Datadog shows it"
    if not value:
        raise ObsError.of(f"{name} is only whitespace", fix)
    bad = next((i for i, char in enumerate(value, 1) if not "!" <= char <= "~"), None)
    if bad is not None:
        raise ObsError.of(f"{name} has a control, space or non-ASCII character at position {bad}", fix)
    return value


def _loopback(url: str) -> bool:
    try:
        name = urlsplit(url).hostname or ""
    except ValueError:
        return False
    if name == "localhost":
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False
