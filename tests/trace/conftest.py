"""A moto server on 127.0.0.1 for the tracer tests, reset before each test."""

from __future__ import annotations

import logging
import urllib.request
from collections.abc import Iterator

import pytest
from moto.server import ThreadedMotoServer

from tests.trace.trace_world import World


@pytest.fixture(scope="session")
def moto_endpoint() -> Iterator[str]:
    logging.getLogger("werkzeug").setLevel(logging.ERROR)  # moto's request log would flood the output
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    yield f"http://{host}:{port}"
    server.stop()


@pytest.fixture
def world(moto_endpoint: str, monkeypatch: pytest.MonkeyPatch) -> World:
    for name in ("AWS_PROFILE", "AWS_SESSION_TOKEN", "AWS_ENDPOINT_URL_SNS", "AWS_ENDPOINT_URL_SQS"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    monkeypatch.setenv("AWS_ENDPOINT_URL", moto_endpoint)
    monkeypatch.setenv("AWS_MAX_ATTEMPTS", "1")  # moto's 500s would otherwise be retried slowly
    request = urllib.request.Request(f"{moto_endpoint}/moto-api/reset", method="POST")
    with urllib.request.urlopen(request) as response:
        assert response.status == 200
    return World(moto_endpoint)
