"""Queue SLO settings: the defaults, a class's `slo:` in queues.yaml, then an environment's `slo:`.

Each value is checked where it was set, so an error names the file and line a person has to change.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from sync.core import durations
from sync.definitions.model import Definitions, Environment
from sync.definitions.source import KeyPath, Source
from sync.errors import ObsError

TIMEFRAMES = ("7d", "30d", "90d")  # the rolling windows Datadog offers for an SLO
SLICE_SECONDS = (60, 300)  # the time-slice sizes Datadog offers
BURNS = ("fast_burn", "slow_burn")

# Time-slice SLO targets and the usual two-window burn-rate pairs for a 30-day SLO. The short windows are
# longer than the textbook 5 minutes: crawled SQS points arrive up to 17 minutes late, and a time slice with
# no data yet counts as good, so a short window under 17 minutes would never confirm a burn (obs test shows it).
# The fast burn pages at 5% of a 30-day budget in an hour (36x, about 11 bad minutes at 99.5%), not the
# textbook 2% (14.4x): a time slice is all bad or all good, so at 99.5% the textbook rate pages on a 5-minute
# burst that autoscaling absorbs, which is the page the SLO is meant to replace.
DEFAULTS: Mapping[str, Any] = {
    "enabled": True,
    "target": 99.5,
    "timeframes": ["30d", "7d"],
    "slice_seconds": 60,
    "fast_burn": {"threshold": 36, "long_window": "1h", "short_window": "30m", "notify": "page", "priority": 1},
    "slow_burn": {"threshold": 6, "long_window": "6h", "short_window": "30m", "notify": "chat", "priority": 3},
}

_LONGEST_WINDOW = 48 * 60  # minutes: Datadog's longest burn-rate window


@dataclass(frozen=True)
class Burn:
    name: str  # fast_burn or slow_burn
    threshold: float
    long_window: str
    short_window: str
    audience: str  # "none" when nobody is notified here
    priority: int


@dataclass(frozen=True)
class SloSettings:
    enabled: bool
    target: float
    warning: float | None
    timeframes: tuple[str, ...]  # the first is the primary: burn rates and the dashboard widget use it
    slice_seconds: int
    burns: tuple[Burn, ...]


@dataclass(frozen=True)
class _Set:
    """Where a value was set: the file and key path a message points at."""

    source: Source
    at: KeyPath


def slo_settings(defs: Definitions, env: Environment, cls: str) -> SloSettings:
    """The SLO settings of a class's queues in one environment, checked."""
    found = _Layers()
    found.add(defs.inventory, ("classes", cls, "slo"), defs.slo_classes.get(cls, {}))
    found.add(env.source, ("slo",), env.slo)
    target = float(found.get("target"))
    if not 0 < target < 100:
        raise found.fail(
            "target", f"SLO target {found.get('target')} is outside (0, 100)", "use a percentage such as 99.5"
        )
    warning = found.get("warning")
    if warning is not None and not target < warning < 100:
        raise found.fail(
            "warning", f"SLO warning {warning} must be above the target {target:g} and below 100", "raise it"
        )
    return SloSettings(
        enabled=bool(found.get("enabled")),
        target=target,
        warning=None if warning is None else float(warning),
        timeframes=tuple(found.get("timeframes")),
        slice_seconds=int(found.get("slice_seconds")),
        burns=tuple(_burn(name, found, target, env) for name in BURNS),
    )


class _Layers:
    """The values set by each layer over the defaults, and where each was set last."""

    def __init__(self) -> None:
        self.values: dict[str, Any] = {}
        self.origin: dict[str, _Set] = {}

    def add(self, source: Source, at: KeyPath, layer: Mapping[str, Any]) -> None:
        for key, value in layer.items():
            if key in BURNS:
                for inner, item in value.items():
                    self.values[f"{key}.{inner}"] = item
                    self.origin[f"{key}.{inner}"] = _Set(source, (*at, key, inner))
            else:
                self.values[key] = value
                self.origin[key] = _Set(source, (*at, key))

    def get(self, name: str) -> Any:
        if name in self.values:
            return self.values[name]
        outer, _, inner = name.partition(".")
        return DEFAULTS[outer][inner] if inner else DEFAULTS.get(name)

    def fail(self, name: str, what: str, fix: str) -> ObsError:
        """An error at the value that broke the rule, else at the target it broke it against."""
        found = self.origin.get(name) or self.origin.get("target")
        return found.source.error(found.at, what, fix) if found else ObsError.of(what, fix)


def _burn(name: str, found: _Layers, target: float, env: Environment) -> Burn:
    long_window, short_window = found.get(f"{name}.long_window"), found.get(f"{name}.short_window")
    long_minutes = _minutes(long_window)
    if long_minutes is None or not 60 <= long_minutes <= _LONGEST_WINDOW:
        raise found.fail(
            f"{name}.long_window", f"long_window '{long_window}' is not 1h to 48h", "use hours, e.g. 1h or 6h"
        )
    short_minutes = _minutes(short_window)
    if short_minutes is None or short_minutes >= long_minutes:
        raise found.fail(
            f"{name}.short_window",
            f"short_window '{short_window}' must be shorter than long_window '{long_window}'",
            "use minutes, e.g. 15m; Datadog suggests a twelfth of the long window",
        )
    threshold = float(found.get(f"{name}.threshold"))
    ceiling = 100 / (100 - target)  # the whole budget spent within the window: Datadog refuses more
    if not 0 < threshold <= ceiling:
        raise found.fail(
            f"{name}.threshold",
            f"burn-rate threshold {found.get(f'{name}.threshold')} is outside (0, {ceiling:.6g}]"
            f" for a {target:g}% target",
            "a burn rate above 1/(1 - target) can never be reached: lower it",
        )
    audience = str(found.get(f"{name}.notify"))
    if audience != "none" and audience not in env.notify:
        if f"{name}.notify" in found.values:
            known = ", ".join(sorted(env.notify)) or "(none declared)"
            raise found.fail(
                f"{name}.notify",
                f"audience '{audience}' is not declared in environments/{env.name}.yaml",
                f"use 'none', or an audience its notify declares: {known}",
            )
        audience = "none"  # a default audience this environment lacks notifies nobody here, as its absence says
    return Burn(name, threshold, long_window, short_window, audience, int(found.get(f"{name}.priority")))


def _minutes(window: object) -> int | None:
    found = durations.split(window, "mh")
    return durations.of(*found) if found else None
