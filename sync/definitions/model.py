"""The definitions as typed, frozen data: what everything after loading trusts."""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from functools import cached_property
from pathlib import Path
from typing import Any

from sync.core.namespaces import NO_NAMESPACE, Ownership
from sync.definitions import tokens
from sync.definitions.overlay import Overlay
from sync.definitions.scenario import Scenario
from sync.definitions.source import Source
from sync.errors import ObsError

DEFAULT_RETENTION_SECONDS = 345_600  # SQS default: 4 days
# What obs expects of a DLQ that declares no retention: the most SQS keeps (14 days), so that a message parked
# late in its queue life still waits there for days (sync.core.retention); obs audit checks the live queue.
DEFAULT_DLQ_RETENTION_SECONDS = 1_209_600
DEFAULT_IN_FLIGHT_QUOTA = 120_000  # per queue, standard and FIFO alike since AWS raised the FIFO limit
DEFAULT_NAMING = "[[env]]-[[name]]"


@dataclass(frozen=True)
class Worker:
    cluster: str
    service: str
    min_tasks: int
    max_tasks: int


@dataclass(frozen=True)
class Dlq:
    name: str
    max_receive_count: int
    retention_seconds: int = DEFAULT_DLQ_RETENTION_SECONDS


@dataclass(frozen=True)
class Topic:
    name: str
    subscription_dlq: str | None = None
    raw_message_delivery: bool | None = None  # None: not declared, so not checked


@dataclass(frozen=True)
class PublisherLog:
    log_group: str
    message_id_field: str
    business_key_field: str | None = None


@dataclass(frozen=True)
class Queue:
    name: str
    cls: str
    runbook: str
    owner: str
    description: str = ""
    slo_seconds: int | None = None
    fifo: bool = False
    content_based_deduplication: bool | None = None  # None: not declared, so not checked
    retention_seconds: int = DEFAULT_RETENTION_SECONDS
    max_processing_seconds: int | None = None  # None: the class's, see Definitions.max_processing_seconds
    silence_minutes: int | None = None  # expects_messages_within: the longest its producers may be silent
    in_flight_quota: int = DEFAULT_IN_FLIGHT_QUOTA
    worker: Worker | None = None
    dlq: Dlq | None = None
    topics: tuple[Topic, ...] = ()
    publisher_log: PublisherLog | None = None
    tags: tuple[str, ...] = ()
    metrics: Mapping[str, Overlay] = field(default_factory=dict)

    @cached_property
    def features(self) -> frozenset[str]:
        """The features a metric may require that the queue has: worker, dlq, topics, slo and traffic (asked for
        every metric of every queue of every environment, so worked out once)."""
        has = {
            "worker": self.worker is not None,
            "dlq": self.dlq is not None,
            "topics": bool(self.topics),
            "slo": self.slo_seconds is not None,
            "traffic": self.silence_minutes is not None,
        }
        return frozenset(feature for feature, present in has.items() if present)


# How a maintenance window that names nothing treats a metric's monitors: its file's `maintenance` key.
PARKED = "parked"  # grows while work waits, until it drains: muted for the window, drain grace and metrics' delay
STOPPED = "stopped"  # alerts while workers are stopped, clears on their first point back: window and metrics' delay
LIVE = "live"  # a fault whatever the window: never muted unless a window names it; what a metric declaring nothing is
MAINTENANCE = (PARKED, STOPPED, LIVE)


@dataclass(frozen=True)
class Metric:
    name: str
    title: str
    for_each: str
    classes: tuple[str, ...] | None
    requires: frozenset[str]
    settings: Overlay
    by_class: Mapping[str, Overlay]
    source: Source = field(repr=False, compare=False)
    # A composite monitor's expression over other metrics of the same queue ([[metric:name]] && ...), in
    # place of a query and thresholds.
    composite: str | None = None
    maintenance: str = LIVE  # one of MAINTENANCE


# Monitors a window can mute that no metric file declares: the burn-rate alerts of a queue's SLO.
BURN_ALERTS = ("slo-fast-burn", "slo-slow-burn")
# An SLO of waiting time burns while work is parked, until it drains. Its SLI is obs's own (the oldest message's
# age against slo_seconds), not a catalogue's metric, so its treatment is declared here with it.
BURN_ALERTS_MAINTENANCE = PARKED


# A window's `mutes: all`: every monitor of its queues, live ones included (out of hours, nobody on call).
ALL: tuple[str, ...] = ("all",)


def maintenance_of(metrics: Iterable[Metric]) -> dict[str, str]:
    """How a window that names nothing treats each monitor it may mute: each metric as its file declares
    (`maintenance`), the burn-rate alerts as parked."""
    return {**{m.name: m.maintenance for m in metrics}, **dict.fromkeys(BURN_ALERTS, BURN_ALERTS_MAINTENANCE)}


@dataclass(frozen=True)
class Schedule:
    """When a window mutes: a recurrence (an RRULE in a time zone, with a duration) or one start and end."""

    timezone: str = "UTC"
    rrule: str | None = None  # canonical: upper case, FREQ first
    minutes: int = 0  # a recurrence's duration
    start: datetime | None = None  # a one-time window's, in UTC
    end: datetime | None = None
    # When the definitions were loaded: a one-time window renders only what is left of it then.
    now: datetime | None = None


@dataclass(frozen=True)
class Window:
    """A named maintenance window of one environment, scoped to queues and to the metrics it mutes."""

    name: str
    description: str
    schedule: Schedule
    queues: tuple[str, ...] | None  # None: every queue (or every queue of `cls`)
    cls: str | None
    parking: tuple[str, ...]
    mutes: tuple[str, ...] | None  # None: every monitor whose metric is not declared live (maintenance_of); ALL
    drain_minutes: int | None  # None: from each queue's class
    index: int  # where it sits in the environment's `maintenance` list, for errors


@dataclass(frozen=True)
class Environment:
    name: str
    account_id: str
    region: str
    site: str
    naming: Mapping[str, str]
    notify: Mapping[str, tuple[str, ...]]
    tags: tuple[str, ...]
    monitors: Overlay
    metrics: Mapping[str, Overlay]
    queues: Mapping[str, Mapping[str, Any]]
    dashboards: Mapping[str, bool]
    source: Source = field(repr=False, compare=False)
    # Audiences a monitor's alert renotifies (renotify_interval): the people on call, not chat channels.
    renotify_audiences: tuple[str, ...] = ("page",)
    # Where AWS metrics come from: the API crawler, or CloudWatch Metric Streams (minutes fresher).
    metrics_source: str = "crawler"
    maintenance: tuple[Window, ...] = ()
    slo: Mapping[str, Any] = field(default_factory=dict)  # SLO settings over every class's (sync.definitions.slo)
    # The tag key Datadog gives AWS metrics for the account (check it in Metrics Summary), if declared.
    account_tag: str | None = None
    # How Datadog holds the SQS counters here ("counts" or "per_second"), if declared: checked in Metrics Summary.
    sqs_counters: str | None = None
    # The page audience's alert grouping window (PagerDuty time-based grouping), minutes; 0: none declared.
    page_grouping_minutes: int = 0
    # The definitions set's namespace (queues.yaml), which every object of this environment is marked with.
    ownership: Ownership = NO_NAMESPACE

    @property
    def aws_scope(self) -> str:
        """The tags that pin an AWS metric to this environment's region (and account, where its tag is
        declared): same-named queues in another region or account would otherwise merge into one series."""
        scope = f"region:{self.region}"
        return f"{scope},{self.account_tag}:{self.account_id}" if self.account_tag else scope

    def declares(self, fact: str) -> bool:
        """Whether the environment declares a fact about its metrics that a metric may need (tokens.FACTS)."""
        return {"sqs_counters": self.sqs_counters is not None}[fact]

    def name_of(self, kind: str, logical: str) -> str:
        pattern = self.naming.get(kind, DEFAULT_NAMING)
        return tokens.fill(pattern, {"env": self.name, "name": logical})


@dataclass(frozen=True)
class DashboardTemplate:
    name: str
    body: Mapping[str, Any]
    source: Source = field(repr=False, compare=False)


@dataclass(frozen=True)
class CatalogueUse:
    """The catalogue shipped with obs that the definitions use (catalogue.yaml), and their settings over it."""

    name: str
    source: Source = field(repr=False, compare=False)
    # metric -> settings over the catalogue's for every queue, then per class (an overlay layer each)
    overrides: Mapping[str, Overlay] = field(default_factory=dict)
    by_class: Mapping[str, Mapping[str, Overlay]] = field(default_factory=dict)


@dataclass(frozen=True)
class Definitions:
    root: Path
    classes: Mapping[str, str]
    queues: tuple[Queue, ...]
    metrics: tuple[Metric, ...]
    environments: tuple[Environment, ...]
    dashboards: tuple[DashboardTemplate, ...]
    inventory: Source = field(repr=False, compare=False)
    # Each environment's queues with its overrides applied, in inventory order, without the disabled ones.
    env_queues: Mapping[str, tuple[Queue, ...]] = field(default_factory=dict, repr=False, compare=False)
    # Each class's declared max_processing_seconds, for queues that do not declare their own.
    processing_defaults: Mapping[str, int] = field(default_factory=dict, repr=False, compare=False)
    # The scenarios `obs test` runs (scenarios/*.yaml, optional).
    scenarios: tuple[Scenario, ...] = field(default=(), repr=False, compare=False)
    # Each class's `slo:` settings as written (sync.definitions.slo merges them with the defaults).
    slo_classes: Mapping[str, Mapping[str, Any]] = field(default_factory=dict, repr=False, compare=False)
    # The shipped catalogue the definitions use by name, if they use one.
    catalogue: CatalogueUse | None = field(default=None, repr=False, compare=False)

    def max_processing_seconds(self, queue: Queue) -> int | None:
        """How long a job of this queue may run before it counts as stuck; None when nobody declared it."""
        return queue.max_processing_seconds or self.processing_defaults.get(queue.cls)

    @cached_property
    def queue_index(self) -> Mapping[str, int]:
        """Where each queue sits in the inventory (for error messages that point into queues.yaml)."""
        return {queue.name: index for index, queue in enumerate(self.queues)}

    def environment(self, name: str) -> Environment:
        for env in self.environments:
            if env.name == name:
                return env
        known = [e.name for e in self.environments]
        close = difflib.get_close_matches(name, known, n=1)
        guess = f"did you mean {close[0]}? " if close else ""
        raise ObsError.of(f"unknown environment '{name}'", f"{guess}use one of: {', '.join(known)}")
