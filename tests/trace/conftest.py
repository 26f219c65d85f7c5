"""A moto server on 127.0.0.1 for the tracer tests, reset before each test."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests import moto
from tests.trace.trace_world import World


@pytest.fixture(scope="session")
def moto_endpoint() -> Iterator[str]:
    yield from moto.serving()


@pytest.fixture
def world(moto_endpoint: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> World:
    moto.isolated(moto_endpoint, monkeypatch, tmp_path, region="us-east-1")
    return World(moto_endpoint)
