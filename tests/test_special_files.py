"""Only regular files are definitions: a named pipe or a device where one is expected is an error, not a hang."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from sync.cli.app import main


def _validate_within(defs: Path, seconds: float) -> tuple[int | None, bool]:
    """Run obs validate in a thread; (exit code, finished in time)."""
    result: list[int] = []
    worker = threading.Thread(target=lambda: result.append(main(["--definitions", str(defs), "validate"])), daemon=True)
    worker.start()
    worker.join(seconds)
    return (result[0] if result else None), not worker.is_alive()


def test_a_named_pipe_is_refused_not_read_forever(example_copy: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pipe = example_copy / "monitors" / "stuck.yaml"
    os.mkfifo(pipe)
    code, finished = _validate_within(example_copy, 30)
    if not finished:  # let the reader go so the test run ends, then fail
        with pipe.open("w") as writer:
            writer.write("")
    assert finished, "obs validate hung on a named pipe"
    assert code == 1
    assert "error: monitors/stuck.yaml: a named pipe, not a regular file" in capsys.readouterr().err


def test_a_device_is_refused(example_copy: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (example_copy / "dashboards" / "zeros.yaml").symlink_to("/dev/zero")  # would read without end
    code, finished = _validate_within(example_copy, 30)
    assert finished and code == 1
    assert "error: dashboards/zeros.yaml: a device or socket, not a regular file" in capsys.readouterr().err


def test_a_folder_named_like_a_definition_is_refused(example_copy: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (example_copy / "monitors" / "folder.yaml").mkdir()
    assert main(["--definitions", str(example_copy), "validate"]) == 1
    assert "error: monitors/folder.yaml: a folder, not a regular file" in capsys.readouterr().err


def test_a_named_pipe_as_the_inventory_is_refused(example_copy: Path, capsys: pytest.CaptureFixture[str]) -> None:
    inventory = example_copy / "queues.yaml"
    inventory.unlink()
    os.mkfifo(inventory)
    code, finished = _validate_within(example_copy, 30)
    if not finished:
        with inventory.open("w") as writer:
            writer.write("")
    assert finished and code == 1
    assert "error: queues.yaml: a named pipe, not a regular file" in capsys.readouterr().err
