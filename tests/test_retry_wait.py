"""OBS_RETRY_WAIT: the first wait before a failed request is tried again, read from the environment."""

from __future__ import annotations

import re
import time
from pathlib import Path

import pytest

from .conftest import Obs
from .fakedd import FakeDatadog


def test_the_first_retry_waits_what_obs_retry_wait_says(
    obs: Obs, dd: FakeDatadog, monkeypatch: pytest.MonkeyPatch
) -> None:
    dd.faults.error_rate = 1.0  # every request fails: five tries, four waits of 0.2, 0.4, 0.8, 1.6 s (jittered)
    monkeypatch.setenv("OBS_RETRY_WAIT", "0.2")
    began = time.monotonic()
    assert obs("plan", "--env", "prod", "--verbose") == 1
    waited = time.monotonic() - began
    retried = re.search(r"(\d+) retried", obs.err)
    assert retried and int(retried[1]) >= 4  # the list that failed was tried five times, the others stop with it
    assert "HTTP 5" in obs.err
    assert waited > 1.5  # at least half of each wait (the jitter), 0.1 + 0.2 + 0.4 + 0.8


@pytest.mark.parametrize("value", ["soon", "-1", "61", "nan"])
def test_a_retry_wait_that_is_not_seconds_is_a_clear_error(
    example_copy: Path, dd: FakeDatadog, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, value: str
) -> None:
    monkeypatch.setenv("OBS_RETRY_WAIT", value)
    obs = Obs(example_copy, capsys)
    assert obs("plan", "--env", "prod") == 1
    assert f"OBS_RETRY_WAIT is '{value}', not a number of seconds from 0 to 60" in obs.err
    assert "Traceback" not in obs.err
    assert dd.log == []  # refused before any call
