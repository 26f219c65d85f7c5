"""Scenario files (`scenarios/*.yaml`): metric series for one queue and what its monitors must do about them.
Read here into frozen data, with every name checked against the inventory so a typo names its file and line."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sync.definitions.names import suggest
from sync.definitions.scenario_series import SeriesSpec, topic_of
from sync.definitions.scenario_series import series as series_of
from sync.definitions.source import KeyPath, Source
from sync.errors import ObsError, Problems

ANY = "any"  # every monitor of the queue and its topics
# The schema's expectation keys -> the evaluation's kinds.
_KINDS = {
    ("pages", "within"): "pages_within",
    ("pages", "count"): "pages_count",
    ("pages", "at_most"): "pages_at_most",
    ("pages", "not_before"): "pages_not_before",
    ("pages", "never"): "pages_never",
    ("alerts", "within"): "alerts_within",
    ("alerts", "never"): "alerts_never",
    ("notifies", "none"): "notifies_none",
    ("warns_chat_only", True): "warns_chat_only",
    ("chat_only", True): "chat_only",
    ("incident", "one"): "one_incident",
    ("incident", "pages_per_audience"): "one_incident",
    ("recovers", "within"): "recovers_within",
    ("no_data_alert", "never"): "no_data_alert_never",
}


@dataclass(frozen=True)
class ExpectSpec:
    monitor: str  # what the scenario calls it: a metric name, `any`, a key below the environment, or a list
    topic: str | None
    kind: str
    within: int | Mapping[str, int] | None  # a mapping: the bound in each environment (prod's data comes sooner)
    after: int | None
    count: int | None
    at: KeyPath
    names: tuple[str, ...] = ()  # each monitor named; their notifications count together

    @property
    def each(self) -> tuple[str, ...]:
        return self.names or (self.monitor,)

    def within_in(self, env: str) -> int | None:
        """The bound in this environment (validation made sure a mapping names each one the scenario runs in)."""
        return self.within.get(env) if isinstance(self.within, Mapping) else self.within


@dataclass(frozen=True)
class DowntimeSpec:
    start: int
    end: int
    monitor_tags: tuple[str, ...]
    monitor: str | None
    scope: str
    mute_first_recovery_notification: bool
    ended_at: int | None = None  # cancelled then (obs maintenance end)


@dataclass(frozen=True)
class Scenario:
    file: str  # the file name without .yaml: what --scenario selects, besides the name
    name: str
    queue: str
    environments: tuple[str, ...] | None
    incident_at: int
    duration: int
    starts_at: datetime | None  # minute 0 in UTC: places the environment's downtimes
    # The environment's notify audiences replaced (page, chat), for an environment that routes to no one.
    audiences: tuple[tuple[str, ...], tuple[str, ...]] | None
    collection: str | None  # None: the environment's metrics_source
    incident_open: bool  # the responder keeps the incident open: renotifications join it and page no one
    alerting: tuple[str, ...]  # monitors already in ALERT at minute 0, named like in expect
    alerting_since: int  # minutes they have been alerting
    series: tuple[SeriesSpec, ...]
    downtimes: tuple[DowntimeSpec, ...]
    expect: tuple[ExpectSpec, ...]
    source: Source = field(repr=False, compare=False)


@dataclass(frozen=True)
class _Names:
    """What a scenario may name, from the inventory and the other definition files."""

    queues: Mapping[str, Mapping[str, Any]]  # logical name -> its inventory entry
    metrics: frozenset[str]
    environments: frozenset[str]


@dataclass(frozen=True)
class Skipped:
    """Names whose own definitions failed: a scenario naming them is not checked against them."""

    queues: frozenset[str] = frozenset()
    metrics: frozenset[str] = frozenset()
    environments: frozenset[str] = frozenset()


def scenario(
    source: Source,
    stem: str,
    queues: Mapping[str, Mapping[str, Any]],
    metrics: Iterable[str],
    environments: Iterable[str],
    skipped: Skipped = Skipped(),
) -> Scenario:
    """The scenario of a file; every problem of it raised together."""
    names = _Names(queues, frozenset(metrics) | skipped.metrics, frozenset(environments) | skipped.environments)
    data = source.data
    queue_name = data["queue"]
    queue = _queue(source, queue_name, names, skipped)
    envs = data.get("environments")
    problems = Problems()
    problems.add(*_header_problems(source, names))
    series = tuple(problems.attempt(series_of, source, index, raw, queue) for index, raw in enumerate(data["series"]))
    expect = tuple(
        problems.attempt(_expect, source, index, raw, queue, names) for index, raw in enumerate(data["expect"])
    )
    for spec in expect:
        if spec is not None:
            problems.add(*_expect_problems(source, spec, tuple(envs or sorted(names.environments)), names))
    downtimes = tuple(
        problems.attempt(_downtime, source, index, raw, queue, names)
        for index, raw in enumerate(data.get("downtimes", ()))
    )
    alerting = tuple(
        problems.attempt(_monitor, source, ("start", "alerting", i), name, names)
        for i, name in enumerate(data.get("start", {}).get("alerting", ()))
    )
    problems.raise_any()
    return Scenario(
        file=stem,
        name=data["name"],
        queue=queue_name,
        environments=tuple(envs) if envs else None,
        incident_at=data["incident_at"],
        duration=data["duration"],
        starts_at=datetime.fromisoformat(data["starts_at"].replace("Z", "+00:00")) if "starts_at" in data else None,
        audiences=(tuple(data["audiences"]["page"]), tuple(data["audiences"]["chat"])) if "audiences" in data else None,
        collection=data.get("collection"),
        incident_open=bool(data.get("incident_open", False)),
        alerting=tuple(m for m in alerting if m is not None),
        alerting_since=int(data.get("start", {}).get("since", 0)),
        series=tuple(s for s in series if s is not None),
        downtimes=tuple(d for d in downtimes if d is not None),
        expect=tuple(e for e in expect if e is not None),
        source=source,
    )


def _queue(source: Source, name: str, names: _Names, skipped: Skipped) -> Mapping[str, Any]:
    """The inventory entry of the scenario's queue."""
    if name in skipped.queues:
        # The queue's own entry has errors, reported there: what the scenario says of it cannot be checked.
        raise ObsError()
    if name not in names.queues:
        fix = suggest(name, set(names.queues), "queues.yaml")
        if not fix.startswith("did you mean"):  # no typo: the queue was renamed or removed
            fix += ", or delete this scenario"
        raise source.error(("queue",), f"unknown queue '{name}'", fix)
    return names.queues[name]


def _header_problems(source: Source, names: _Names) -> Iterator[ObsError]:
    data = source.data
    for index, env in enumerate(data.get("environments") or ()):
        if env not in names.environments:
            yield source.error(
                ("environments", index),
                f"unknown environment '{env}'",
                suggest(env, set(names.environments), "environments/"),
            )
    if data["incident_at"] > data["duration"]:
        yield source.error(
            ("incident_at",),
            f"incident_at {data['incident_at']} is after the last minute {data['duration']}",
            "make it at most duration",
        )


def _expect_problems(source: Source, spec: ExpectSpec, envs: tuple[str, ...], names: _Names) -> Iterator[ObsError]:
    if isinstance(spec.within, Mapping):
        yield from _bounds(source, spec, spec.within, envs, names)
    duration = source.data["duration"]
    if spec.after is not None and spec.after > duration:
        yield source.error(
            (*spec.at, "after"), f"after {spec.after} is past the last minute {duration}", "make it at most duration"
        )


def _expect(source: Source, index: int, raw: Mapping[str, Any], queue: Mapping[str, Any], names: _Names) -> ExpectSpec:
    """The expectation of one entry; every problem of it raised together."""
    at: KeyPath = ("expect", index)
    problems = Problems()
    listed = raw["monitor"] if isinstance(raw["monitor"], list) else [raw["monitor"]]
    each = tuple(
        problems.attempt(_monitor, source, (*at, "monitor", i) if len(listed) > 1 else (*at, "monitor"), m, names)
        for i, m in enumerate(listed)
    )
    topic = raw.get("topic")
    if topic is not None:
        problems.attempt(topic_of, source, (*at, "topic"), topic, queue)
    said = [k for k in raw if k not in ("monitor", "topic")]
    if len(said) != 1:
        problems.add(
            source.error(
                at,
                "an expectation says one thing about the monitor" if said else "the expectation says nothing",
                "write one of pages, alerts, notifies, warns_chat_only, chat_only, incident, recovers or "
                "no_data_alert per entry",
            )
        )
    problems.raise_any()
    monitors = tuple(m for m in each if m is not None)
    what = said[0]
    value = raw[what]
    form = _form(value)
    kind = _KINDS[(what, form)]
    given: Mapping[str, Any] = value if isinstance(value, Mapping) else {}
    within = given.get("within")
    after = given.get("after", given.get("not_before"))
    count = given.get("count", given.get("at_most", given.get("pages_per_audience")))
    if kind == "pages_never":
        kind, count = "pages_count", 0
    if kind == "one_incident" and count is None:
        count = 1
    return ExpectSpec(
        " + ".join(monitors), topic, kind, within, after, count, (*at, what), monitors if len(monitors) > 1 else ()
    )


def _bounds(
    source: Source, spec: ExpectSpec, within: Mapping[str, int], runs_in: tuple[str, ...], names: _Names
) -> list[ObsError]:
    """A bound per environment names known environments, and each one the scenario runs in."""
    at = (*spec.at, "within")
    found = [
        source.error((*at, env), f"unknown environment '{env}'", suggest(env, set(names.environments), "environments/"))
        for env in within
        if env not in names.environments
    ]
    missing = [env for env in runs_in if env not in within]
    if missing:
        found.append(
            source.error(
                at,
                f"no bound for {', '.join(missing)}, where the scenario runs",
                f"add {missing[0]}: MINUTES, or one number for every environment",
            )
        )
    return found


def _form(value: Any) -> Any:
    """Which form of an expectation a value is: `never`, `true`, or the key that tells its mapping apart."""
    if not isinstance(value, Mapping):
        return value
    return next(k for k in ("within", "count", "at_most", "not_before", "pages_per_audience") if k in value)


def _monitor(source: Source, at: KeyPath, monitor: str, names: _Names) -> str:
    if monitor == ANY or "/" in monitor or monitor in names.metrics:
        return monitor
    raise source.error(
        at,
        f"unknown monitor '{monitor}'",
        suggest(monitor, set(names.metrics), "monitors/")
        + f" (or `{ANY}` for every monitor of the queue, or a key below the environment such as queue/name)",
    )


def _downtime(
    source: Source, index: int, raw: Mapping[str, Any], queue: Mapping[str, Any], names: _Names
) -> DowntimeSpec:
    at: KeyPath = ("downtimes", index)
    if raw["end"] <= raw["start"]:
        raise source.error(
            (*at, "end"),
            f"the downtime ends ({raw['end']}) before it starts ({raw['start']})",
            "make end later than start",
        )
    ended_at = raw.get("ended_at")
    if ended_at is not None and not raw["start"] < ended_at <= raw["end"]:
        raise source.error(
            (*at, "ended_at"),
            f"ended_at {ended_at} is not within the downtime ({raw['start']} to {raw['end']})",
            "end it after its start and no later than its end",
        )
    monitor = raw.get("monitor")
    if monitor is not None:
        _monitor(source, (*at, "monitor"), monitor, names)
    return DowntimeSpec(
        raw["start"],
        raw["end"],
        tuple(raw.get("monitor_tags", ("*",))),
        monitor,
        raw.get("scope", "*"),
        bool(raw.get("mute_first_recovery_notification", False)),
        ended_at,
    )
