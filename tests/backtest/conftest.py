"""A moto server on 127.0.0.1 for the backtest tests (CloudWatch and STS), reset before each test, and the AWS
environment pointed at it alone."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests import moto


@pytest.fixture(scope="session")
def moto_server() -> Iterator[str]:
    yield from moto.serving()


@pytest.fixture
def aws(moto_server: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> str:
    """The endpoint, with nothing of the developer's AWS set-up in reach."""
    moto.isolated(moto_server, monkeypatch, tmp_path)
    return moto_server
