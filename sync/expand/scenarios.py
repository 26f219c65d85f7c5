"""Pure: a scenario placed in one environment: its series carry the queue's physical names there, and its
expectations name that environment's monitors."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import replace
from datetime import datetime, timedelta
from typing import Any

from sync.core.evaluation import correction, notes
from sync.core.evaluation.expect import Audience, Expectation
from sync.core.evaluation.notify import MuteWindow
from sync.core.evaluation.series import (
    ARRIVALS,
    LATEST,
    SNS_PERIODS,
    SNS_PREFIX,
    Arrival,
    Series,
    arrivals,
    five_minute,
    points,
)
from sync.core.evaluation.simulate import Case
from sync.core.keys import Key
from sync.core.kinds import SLO, SLO_CORRECTION
from sync.core.resources import Resource
from sync.definitions.model import Definitions, Environment
from sync.definitions.scenario import ANY, ExpectSpec, Scenario, SeriesSpec
from sync.errors import ObsError
from sync.expand.maintenance import NOTIFY_END_STATES
from sync.expand.mute_records import records
from sync.expand.naming import PlacedQueue, place

_SQS = ("queue", "dlq", "subscription_dlq")


def environments(defs: Definitions, scenario: Scenario) -> tuple[Environment, ...]:
    """The environments the scenario runs in (the definitions checked that the ones it names exist)."""
    if scenario.environments:
        return tuple(defs.environment(name) for name in scenario.environments)
    return defs.environments


def heard_by(defs: Definitions, env: Environment, scenario: Scenario) -> tuple[Definitions, Environment]:
    """The definitions and environment as the scenario hears them: with `audiences`, the environment's notify
    audiences replaced, so a scenario can say what a team that opts in to an environment routing to no one
    would hear."""
    if scenario.audiences is None:
        return defs, env
    page, chat = scenario.audiences
    heard = replace(env, notify={**env.notify, "page": page, "chat": chat})
    environments = tuple(heard if e.name == env.name else e for e in defs.environments)
    return replace(defs, environments=environments), heard


def case(defs: Definitions, scenario: Scenario, env: Environment, resources: Sequence[Resource]) -> Case | str:
    """The scenario in the environment, or why it does not apply there (only when it names no environments:
    one it names must have everything the scenario needs)."""
    queue = next((q for q in defs.env_queues[env.name] if q.name == scenario.queue), None)
    if queue is None:
        return _missing(scenario, ("queue",), f"queue '{scenario.queue}' is disabled in {env.name}")
    placed = place(env, queue)
    monitors = {r.key: r for r in resources if r.kind.notifies}
    expectations = []
    for spec in scenario.expect:
        keys = _keys(spec, scenario, env.name, monitors)
        if not keys:
            return _missing(
                scenario, spec.at[:-1], f"{env.name} has no {spec.monitor} monitor for queue '{scenario.queue}'"
            )
        if isinstance(keys, str):
            raise scenario.source.error(spec.at[:-1], keys, "say which with topic: NAME")
        leaves_out = spec.monitor == ANY or len(spec.each) > 1
        expectations.append(Expectation(spec.monitor, keys, spec.kind, spec.within, spec.after, spec.count, leaves_out))
    _check_metrics(scenario, monitors, expectations, resources)
    used: set[notes.Assumption] = set()
    collection = scenario.collection or env.metrics_source
    arrived = _arrivals(scenario, placed, collection, used)
    series = next(s for name, s in arrived if name.startswith(LATEST.name))
    mutes: list[MuteWindow] = []
    for down in scenario.downtimes:
        key = None
        if down.monitor is not None:
            spec = ExpectSpec(down.monitor, None, "", None, None, None, ("downtimes",))
            found = _keys(spec, scenario, env.name, monitors)
            if not found or isinstance(found, str) or len(found) != 1:
                return _missing(scenario, ("downtimes",), f"{env.name} has no single {down.monitor} monitor to mute")
            key = found[0]
        mutes.append(
            MuteWindow(down.start, down.end, down.monitor_tags, key, down.scope, down.mute_first_recovery_notification)
        )
    corrected: dict[str, tuple[tuple[int, int], ...]] = {}
    if scenario.starts_at is not None:
        mutes += _downtimes(defs, scenario, env, scenario.starts_at)
        # Placed from the bodies obs syncs, so the model corrects the minutes Datadog would.
        fixes = [r.body for r in resources if r.kind == SLO_CORRECTION]
        corrected = correction.corrected(fixes, scenario.starts_at, scenario.duration)
    return Case(
        scenario=scenario.name,
        env=env.name,
        incident_at=scenario.incident_at,
        duration=scenario.duration,
        series=series,
        monitors={key: r.body for key, r in monitors.items()},
        expectations=tuple(expectations),
        audience=Audience(
            frozenset(env.notify.get("page", ())), frozenset(env.notify.get("chat", ())), scenario.incident_open
        ),
        mutes=tuple(mutes),
        assumptions=tuple(sorted(used, key=notes.order)),
        slos={r.key: r.body for r in resources if r.kind == SLO},
        corrections=corrected,
        arrivals=arrived,
        load_keys=tuple(sorted(k for k, r in monitors.items() if r.queue == scenario.queue)),
    )


def _arrivals(
    scenario: Scenario, placed: PlacedQueue, collection: str, used: set[notes.Assumption]
) -> tuple[tuple[str, tuple[Series, ...]], ...]:
    """The scenario's series at each point of the arrival range; with SNS series, under both SNS periods (U5).
    A series that does not change between two readings is one object, so runs that read only it are shared."""
    sns = any(s.metric.startswith(SNS_PREFIX) for s in scenario.series)
    if sns:
        used.add(notes.SNS_PERIOD)
    out: list[tuple[str, tuple[Series, ...]]] = []
    for arrival in ARRIVALS:
        plain = {i: _series(s, placed, collection, arrival, 1, used) for i, s in enumerate(scenario.series)}
        for period in SNS_PERIODS if sns else (1,):
            made = tuple(
                _series(s, placed, collection, arrival, period, used)
                if period != 1 and s.metric.startswith(SNS_PREFIX)
                else plain[i]
                for i, s in enumerate(scenario.series)
            )
            out.append((f"{arrival.name}, SNS period {period} min" if sns else arrival.name, made))
    return tuple(out)


_METRIC = re.compile(r"([a-z][a-z0-9_]*(?:\.[a-z0-9_]+)+)\{")


def _reads(body: Mapping[str, Any]) -> set[str]:
    """The metrics a monitor or SLO body reads: each name a scope `{...}` follows, in any of its queries."""
    return set(_METRIC.findall(json.dumps(body.get("query", "")) + json.dumps(body.get("sli_specification", ""))))


def _check_metrics(
    scenario: Scenario, monitors: dict[str, Resource], expectations: list[Expectation], resources: Sequence[Resource]
) -> None:
    """A series no monitor reads is a typo or a wrong guess: say so, with what the named monitors do read."""
    read = set().union(*(_reads(r.body) for r in resources if r.kind.notifies or r.kind == SLO))
    for index, spec in enumerate(scenario.series):
        if spec.metric in read:
            continue
        named = {key for e in expectations for key in e.keys}
        theirs = sorted(
            set().union(*(_reads(monitors[key].body) for key in named)) | _slo_reads(named, monitors, resources)
        )
        raise scenario.source.error(
            ("series", index, "metric"),
            f"no monitor reads {spec.metric}",
            "the monitors this scenario names read: " + ", ".join(theirs),
        )


def _slo_reads(named: set[str], monitors: dict[str, Resource], resources: Sequence[Resource]) -> set[str]:
    """What the SLOs behind the named burn-rate alerts read."""
    text = " ".join(json.dumps(monitors[key].body) for key in named)
    return set().union(*(_reads(r.body) for r in resources if r.kind == SLO and r.key.split("/")[-1] in text))


def _downtimes(defs: Definitions, scenario: Scenario, env: Environment, starts_at: datetime) -> list[MuteWindow]:
    return maintenance_mutes(defs, env, starts_at, scenario.duration)


def maintenance_mutes(defs: Definitions, env: Environment, starts_at: datetime, duration: int) -> list[MuteWindow]:
    """The environment's planned maintenance windows, as the downtimes obs syncs for them, placed in the
    minutes from `starts_at` (a scenario's, or a backtest's real clock). Read from the windows themselves
    (mute_records.records): the rendered recurrences carry no start of their own, since Datadog starts them
    when they are created."""

    def minute(moment: datetime) -> int:
        return int((moment - starts_at).total_seconds() // 60)

    until = starts_at + timedelta(minutes=duration + 1)
    return [
        MuteWindow(
            max(minute(record.start), 0),
            minute(record.end),
            monitor_tags=record.monitor_tags,
            # As maintenance.downtime writes them: no recovery for an alert nobody heard of, and a
            # notification at expiry for whatever still alerts.
            mute_first_recovery_notification=True,
            end_states=tuple(NOTIFY_END_STATES),
            notify_on_expiry=True,
        )
        for record in records(defs, env, starts_at, until)
    ]


def _missing(scenario: Scenario, at: tuple[str | int, ...], why: str) -> str:
    if scenario.environments:
        raise scenario.source.error(at, why, "remove the environment from `environments`, or the expectation")
    return why


def _keys(spec: ExpectSpec, scenario: Scenario, env: str, monitors: dict[str, Resource]) -> tuple[str, ...] | str:
    """The monitors an expectation names (none when one of them is missing); a text when it is ambiguous."""
    found: list[str] = []
    for name in spec.each:
        keys = _named(name, spec.topic, scenario, env, monitors)
        if isinstance(keys, str) or not keys:
            return keys
        found += [key for key in keys if key not in found]
    return tuple(found)


def _named(
    monitor: str, topic: str | None, scenario: Scenario, env: str, monitors: dict[str, Resource]
) -> tuple[str, ...] | str:
    if monitor == ANY:
        return tuple(sorted(k for k, r in monitors.items() if r.queue == scenario.queue))
    if "/" in monitor:
        key = f"{env}/{monitor}"
        return (key,) if key in monitors else ()
    found = sorted(
        key
        for key, r in monitors.items()
        if r.queue == scenario.queue
        and f"metric:{monitor}" in r.body.get("tags", ())
        and (topic is None or Key.of(key).topic == topic)
    )
    if len(found) > 1:
        return f"queue '{scenario.queue}' has {len(found)} {monitor} monitors in {env}, one per topic"
    return tuple(found)


def _series(
    spec: SeriesSpec, placed: PlacedQueue, collection: str, arrival: Arrival, period: int, used: set[notes.Assumption]
) -> Series:
    topic = next((t for t in placed.topics if t.name == spec.topic), None)
    by_kind: dict[str, dict[str, str | None]] = {
        "queue": {"queuename": placed.sqs_name},
        "dlq": {"queuename": placed.dlq_sqs_name},
        "topic": {"topicname": topic.sns_name if topic else None},
        "subscription_dlq": {"queuename": topic.subscription_dlq if topic else None},
        "service": {"clustername": placed.cluster, "servicename": placed.service},
    }
    tags = by_kind[spec.of]
    if any(value is None for value in tags.values()):
        raise ObsError.of(f"queue '{placed.name}' has no {spec.of} in {placed.env}")  # checked when loading
    stamped = points(spec.segments)
    if period != 1:
        stamped = five_minute(stamped, summed=not spec.metric.endswith("publish_size"))
    delay = arrival.delay(collection, period)
    arrived = arrivals(stamped, delay, spec.of in _SQS, spec.idle_before, used, wake=arrival.wake)
    # The AWS integration tags every metric with the region and account it came from; the queries scope by them.
    carried = {**tags, "region": placed.region, "aws_account": placed.account_id}
    return Series(spec.metric, {k: str(v) for k, v in carried.items()}, stamped, arrived)
