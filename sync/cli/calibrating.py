"""`obs backtest --calibrate`: the replay's transitions checked against the monitors' real ones, read from
Datadog's monitor alert events for the period with the credentials and pacing of every other Datadog call."""

from __future__ import annotations

import dataclasses
import os

from sync.cli.live import connected
from sync.core.backtest import monitor_events
from sync.core.backtest.calibration import calibrate
from sync.datadog import events
from sync.datadog.credentials import endpoint
from sync.definitions.model import Environment
from sync.report.backtest import Backtest

WITHOUT = "run obs backtest without --calibrate"


def check_credentials(env: Environment) -> None:
    """Before the history is read: --calibrate cannot run without Datadog's keys, whatever --source is."""
    endpoint(os.environ, env.site, env.name, WITHOUT)


def calibrated(found: Backtest, env: Environment) -> Backtest:
    """The backtest with its calibration: the environment's monitors in Datadog (as `obs plan` finds them),
    their alert events over the period, and the model's transitions matched against them."""
    with connected(env, timeout=30.0, verbose=False, without=WITHOUT) as dd:
        keys = events.owned_monitors(dd, env.name)
        raw = events.monitor_events(dd, found.start, found.end)
    ours = [event for e in raw if (event := monitor_events.read(e)) is not None and event.monitor_id in keys]
    real = monitor_events.transitions(ours, keys, found.origin)
    live = set(keys.values())
    not_live = [item.key for item in found.replay.monitors if item.key not in live]
    result = calibrate(found.replay, real, env.metrics_source, not_live, len(ours))
    return dataclasses.replace(found, calibration=result)
