"""A moto server on 127.0.0.1 for the backtest tests (CloudWatch and STS), reset before each test, and the AWS
environment pointed at it alone."""

from __future__ import annotations

import logging
import os
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from moto.server import ThreadedMotoServer


@pytest.fixture(scope="session")
def moto_server() -> Iterator[str]:
    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    yield f"http://{host}:{port}"
    server.stop()


@pytest.fixture
def aws(moto_server: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> str:
    """The endpoint, with nothing of the developer's AWS set-up in reach."""
    for name in [n for n in os.environ if n.startswith("AWS_")]:
        monkeypatch.delenv(name)
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "no-aws-config"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "no-aws-credentials"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    monkeypatch.setenv("AWS_ENDPOINT_URL", moto_server)
    monkeypatch.setenv("AWS_MAX_ATTEMPTS", "1")
    request = urllib.request.Request(f"{moto_server}/moto-api/reset", method="POST")
    with urllib.request.urlopen(request) as response:
        assert response.status == 200
    return moto_server
