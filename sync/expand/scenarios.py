"""Pure: a scenario placed in one environment: its series carry the queue's physical names there, and its
expectations name that environment's monitors."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import replace
from datetime import datetime, timedelta
from functools import cache
from typing import Any

from sync.core.evaluation import correction, facts, notes
from sync.core.evaluation.audience import Audience
from sync.core.evaluation.expect import Expectation
from sync.core.evaluation.notify import MuteWindow
from sync.core.evaluation.series import LATEST
from sync.core.evaluation.simulate import Case
from sync.core.evaluation.states import ALERT, Start
from sync.core.evaluation.tasks import family
from sync.core.keys import Key
from sync.core.kinds import SLO, SLO_CORRECTION
from sync.core.resources import Resource
from sync.definitions.model import Definitions, Environment
from sync.definitions.scenario import ANY, ExpectSpec, Scenario
from sync.expand.maintenance import ADHOC_END_TYPES, NOTIFY_END_STATES, end_grace
from sync.expand.mute_records import records
from sync.expand.naming import place
from sync.expand.scenario_series import readings
from sync.expand.settings import Shared


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
        expectations.append(
            Expectation(spec.monitor, keys, spec.kind, spec.within_in(env.name), spec.after, spec.count, leaves_out)
        )
    _check_metrics(scenario, monitors, expectations, resources)
    used: set[notes.Assumption] = set()
    collection = scenario.collection or env.metrics_source
    arrived = readings(scenario, placed, collection, used, _declared(env))
    series = next(s for name, s in arrived if name.startswith(LATEST.name))
    mutes = _mutes(defs, scenario, env, monitors)
    if isinstance(mutes, str):
        return mutes
    start = _start(scenario, env, monitors)
    if isinstance(start, str):
        return start
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
            frozenset(env.notify.get("page", ())),
            frozenset(env.notify.get("chat", ())),
            scenario.incident_open,
            env.page_grouping_minutes,
        ),
        mutes=tuple(mutes),
        assumptions=tuple(sorted(used, key=notes.order)),
        settled=(notes.SQS_COUNTER_UNIT,) if env.sqs_counters else (),
        slos={r.key: r.body for r in resources if r.kind == SLO},
        corrections=corrected,
        arrivals=arrived,
        load_keys=tuple(sorted(k for k, r in monitors.items() if r.queue == scenario.queue)),
        start=start,
    )


def _mutes(
    defs: Definitions, scenario: Scenario, env: Environment, monitors: dict[str, Resource]
) -> list[MuteWindow] | str:
    """The scenario's own downtimes, as `obs maintenance start` makes them. One `ended_at` is ended then by
    `obs maintenance end`: each monitor's mute expires once its metrics can show the maintenance over (the grace
    a planned window adds), and notifies of a state still alerting then."""
    mutes: list[MuteWindow] = []
    for down in scenario.downtimes:
        key = None
        if down.monitor is not None:
            spec = ExpectSpec(down.monitor, None, "", None, None, None, ("downtimes",))
            found = _keys(spec, scenario, env.name, monitors)
            if not found or isinstance(found, str) or len(found) != 1:
                return _missing(scenario, ("downtimes",), f"{env.name} has no single {down.monitor} monitor to mute")
            key = found[0]
        window = MuteWindow(
            down.start,
            down.end,
            down.monitor_tags,
            key,
            down.scope,
            down.mute_first_recovery_notification,
            notify_on_expiry="expired" in ADHOC_END_TYPES,
        )
        if down.ended_at is None or down.ended_at >= down.end:
            mutes.append(window)
        else:
            mutes += _ended(defs, scenario, env, monitors, window, down.ended_at)
    return mutes


def _ended(
    defs: Definitions,
    scenario: Scenario,
    env: Environment,
    monitors: dict[str, Resource],
    window: MuteWindow,
    ended_at: int,
) -> list[MuteWindow]:
    """A downtime ended early, one mute per monitor it targets: each until its metric's grace is over."""
    queue = next(q for q in defs.env_queues[env.name] if q.name == scenario.queue)
    shared: Shared = {}
    out = []
    for key, resource in sorted(monitors.items()):
        tags = resource.body.get("tags") or ()
        metric = Key.of(key).metric
        if metric is None or not window.targets(key, tags, set()):
            continue
        until = min(window.end, ended_at + end_grace(defs, env, queue, metric, shared))
        out.append(replace(window, end=until, monitor_tags=("*",), monitor_key=key))
    return out


def _start(scenario: Scenario, env: Environment, monitors: dict[str, Resource]) -> dict[str, Start] | str:
    """The monitors already in ALERT at minute 0: a scenario that starts mid-story."""
    out: dict[str, Start] = {}
    for index, name in enumerate(scenario.alerting):
        spec = ExpectSpec(name, None, "", None, None, None, ("start", "alerting", index))
        found = _keys(spec, scenario, env.name, monitors)
        if not found or isinstance(found, str):
            return _missing(scenario, spec.at, f"{env.name} has no single {name} monitor for queue '{scenario.queue}'")
        out.update({key: Start(ALERT, scenario.alerting_since) for key in found})
    return out


_METRIC = re.compile(r"([a-z][a-z0-9_]*(?:\.[a-z0-9_]+)+)\{")


def _reads(body: Mapping[str, Any]) -> frozenset[str]:
    """The metrics a monitor or SLO body reads: each name a scope `{...}` follows, in any of its queries."""
    return _metrics_in(_text(body.get("query", ""))) | _metrics_in(_text(body.get("sli_specification", "")))


@cache  # every scenario asks it of every monitor of its environment
def _metrics_in(text: str) -> frozenset[str]:
    return frozenset(_METRIC.findall(text))


def _text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, sort_keys=True)


def _check_metrics(
    scenario: Scenario, monitors: dict[str, Resource], expectations: list[Expectation], resources: Sequence[Resource]
) -> None:
    """A series no monitor reads is a typo or a wrong guess: say so, with what the named monitors do read."""
    read = set().union(*(_reads(r.body) for r in resources if r.kind.notifies or r.kind == SLO))
    for index, spec in enumerate(scenario.series):
        if read & set(family(spec.metric) if spec.tasks else (spec.metric,)):
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


def _declared(env: Environment) -> tuple[facts.Reading, ...]:
    """The readings of open facts that the environment settles by declaring them."""
    units = {"counts": facts.PER_MINUTE, "per_second": facts.PER_SECOND}
    return (units[env.sqs_counters],) if env.sqs_counters else ()
