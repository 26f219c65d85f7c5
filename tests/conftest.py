"""Shared fixtures: the shipped example definitions, copies of it to break, and golden files."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from sync.definitions import load
from sync.model import Definitions

ROOT = Path(__file__).resolve().parent.parent
DEFINITION_PARTS = ("queues.yaml", "environments", "monitors", "dashboards")


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--update-golden", action="store_true", help="rewrite golden files from current output")


@pytest.fixture(scope="session")
def example() -> Definitions:
    return load(ROOT)


@pytest.fixture
def example_copy(tmp_path: Path) -> Path:
    """A writable copy of the example definitions."""
    target = tmp_path / "defs"
    target.mkdir()
    for part in DEFINITION_PARTS:
        source = ROOT / part
        if source.is_dir():
            shutil.copytree(source, target / part)
        else:
            shutil.copy(source, target / part)
    return target


Golden = Callable[[str, str], None]


@pytest.fixture
def golden(request: pytest.FixtureRequest) -> Golden:
    """Compare text with tests/golden/<name>; --update-golden rewrites it instead."""
    update = bool(request.config.getoption("--update-golden"))

    def check(name: str, text: str) -> None:
        path = ROOT / "tests" / "golden" / name
        if update:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
        assert path.exists(), f"missing golden file {name}: run pytest --update-golden and review it"
        assert text == path.read_text(), f"{name} differs from its golden file (pytest --update-golden)"

    return check
