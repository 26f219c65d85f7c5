"""moto in server mode on 127.0.0.1 for the tests of obs's AWS side, and an AWS environment that reaches it alone."""

from __future__ import annotations

import logging
import os
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from moto.server import ThreadedMotoServer


def serving() -> Iterator[str]:
    """A moto server for a test session: its endpoint, then it stops."""
    logging.getLogger("werkzeug").setLevel(logging.ERROR)  # moto's request log would flood the output
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    yield f"http://{host}:{port}"
    server.stop()


def isolated(endpoint: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, region: str | None = None) -> None:
    """Nothing of the developer's AWS set-up in reach (no AWS_* variable, no config file): only the moto
    server, emptied for this test."""
    for name in [n for n in os.environ if n.startswith("AWS_")]:
        monkeypatch.delenv(name)
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "no-aws-config"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "no-aws-credentials"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    if region is not None:
        monkeypatch.setenv("AWS_DEFAULT_REGION", region)
    monkeypatch.setenv("AWS_ENDPOINT_URL", endpoint)
    monkeypatch.setenv("AWS_MAX_ATTEMPTS", "1")  # moto's 500s would otherwise be retried slowly
    request = urllib.request.Request(f"{endpoint}/moto-api/reset", method="POST")
    with urllib.request.urlopen(request) as response:
        assert response.status == 200
