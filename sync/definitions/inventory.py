"""The queue inventory (queues.yaml) as Queues, and as each environment sees it with its overrides."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from sync.core import durations
from sync.core.retention import MAX_RETENTION_SECONDS, dlq_life
from sync.definitions import names
from sync.definitions.model import (
    DEFAULT_DLQ_RETENTION_SECONDS,
    DEFAULT_IN_FLIGHT_QUOTA,
    DEFAULT_RETENTION_SECONDS,
    Dlq,
    Environment,
    PublisherLog,
    Queue,
    Topic,
    Worker,
)
from sync.definitions.overlay import deep_merge
from sync.definitions.source import KeyPath, Source
from sync.errors import ObsError, Problems

MAX_SILENCE_MINUTES = 1440


def inventory_queues(
    inventory: Source, classes: Mapping[str, str] | None, problems: Problems
) -> tuple[tuple[Queue, ...], frozenset[str]]:
    """The queues of the inventory that could be built, and the names of those that could not (what refers
    to them is not checked, so one mistake is reported once). Every problem goes to `problems`. Without
    `classes` (their own declaration failed), queue classes are not checked."""
    seen: dict[str, int] = {}
    out = []
    broken: set[str] = set()
    for index, raw in enumerate(inventory.data["queues"]):
        name = raw["name"]
        if name in seen:
            problems.add(
                inventory.error(
                    ("queues", index, "name"),
                    f"queue '{name}' is declared twice (first on line {inventory.line_of(('queues', seen[name]))})",
                    "give each queue a unique name",
                )
            )
            continue
        seen[name] = index
        if classes is not None:
            problems.attempt(check_class, inventory, ("queues", index, "class"), raw["class"], classes)
        queue = problems.attempt(queue_from, raw, inventory, ("queues", index))
        if queue is None:
            broken.add(name)
        else:
            out.append(queue)
    return tuple(out), frozenset(broken)


def queue_from(raw: Mapping[str, Any], source: Source, at: KeyPath) -> Queue:
    """Build a Queue from its inventory entry (possibly merged with an environment's override); every
    problem of the entry is raised together."""
    problems = Problems()
    problems.add(*_worker_problems(raw, source, at), *_topic_problems(raw, source, at))
    silence = _silence(raw)
    problems.add(*_dlq_problems(raw, source, at), *_silence_problems(silence, source, at))
    problems.raise_any()
    worker, dlq, log = raw.get("worker"), raw.get("dlq"), raw.get("publisher_log")
    return Queue(
        name=raw["name"],
        cls=raw["class"],
        runbook=raw["runbook"],
        owner=raw["owner"],
        description=raw.get("description", ""),
        slo_seconds=raw.get("slo_seconds"),
        fifo=raw.get("fifo", False),
        content_based_deduplication=raw.get("content_based_deduplication"),
        retention_seconds=raw.get("retention_seconds", DEFAULT_RETENTION_SECONDS),
        max_processing_seconds=raw.get("max_processing_seconds"),
        silence_minutes=silence,
        in_flight_quota=raw.get("in_flight_quota", DEFAULT_IN_FLIGHT_QUOTA),
        worker=Worker(**worker) if worker else None,
        dlq=Dlq(**dlq) if dlq else None,
        topics=tuple(
            Topic(t["name"], t.get("subscription_dlq"), t.get("raw_message_delivery")) for t in raw.get("topics", ())
        ),
        publisher_log=PublisherLog(log["log_group"], log["message_id_field"], log.get("business_key_field"))
        if log
        else None,
        tags=tuple(raw.get("tags", ())),
        metrics=raw.get("metrics", {}),
    )


def _worker_problems(raw: Mapping[str, Any], source: Source, at: KeyPath) -> Iterator[ObsError]:
    worker = raw.get("worker")
    if worker is None:
        return
    missing = {"cluster", "service", "min_tasks", "max_tasks"} - set(worker)
    if missing:
        yield source.error((*at, "worker"), f"worker lacks {', '.join(sorted(missing))}", "add them")
    elif worker["min_tasks"] > worker["max_tasks"]:
        yield source.error(
            (*at, "worker", "min_tasks"),
            f"min_tasks {worker['min_tasks']} is above max_tasks {worker['max_tasks']}",
            "lower min_tasks or raise max_tasks",
        )


def _topic_problems(raw: Mapping[str, Any], source: Source, at: KeyPath) -> Iterator[ObsError]:
    names = [t["name"] for t in raw.get("topics", ())]
    for index, name in enumerate(names):
        if name in names[:index]:
            yield source.error((*at, "topics", index, "name"), f"topic '{name}' is listed twice", "list it once")


def _dlq_problems(raw: Mapping[str, Any], source: Source, at: KeyPath) -> Iterator[ObsError]:
    dlq = raw.get("dlq")
    if dlq is None:
        return
    if {"name", "max_receive_count"} - set(dlq):
        yield source.error((*at, "dlq"), "dlq needs name and max_receive_count", "add them")
    retention = raw.get("retention_seconds", DEFAULT_RETENTION_SECONDS)
    kept = dlq.get("retention_seconds", DEFAULT_DLQ_RETENTION_SECONDS)
    if dlq_life(retention, kept, bool(raw.get("fifo"))) <= 0:
        yield source.error(
            (*at, "dlq", "retention_seconds") if "retention_seconds" in dlq else (*at, "dlq"),
            f"the DLQ keeps messages {kept} s, no longer than the queue's {retention} s: a parked message "
            "expires counting from when it was first sent, so it could vanish as soon as it is parked",
            f"lower the queue's retention_seconds below {kept}"
            + (f", or raise dlq.retention_seconds above {retention}" if retention < MAX_RETENTION_SECONDS else "")
            + " (1209600 s, 14 days, is the most SQS keeps)",
        )


def _silence(raw: Mapping[str, Any]) -> int | None:
    return durations.minutes(raw["expects_messages_within"], "mh") if "expects_messages_within" in raw else None


def _silence_problems(silence: int | None, source: Source, at: KeyPath) -> Iterator[ObsError]:
    if silence is not None and silence > MAX_SILENCE_MINUTES:  # a monitor's window is at most a day
        yield source.error(
            (*at, "expects_messages_within"),
            f"{silence} minutes of silence is more than a day, the longest window a monitor can sum",
            "write at most 24h; a queue quiet for longer needs no silence check",
        )


def check_class(source: Source, at: KeyPath, cls: str, classes: Mapping[str, str]) -> None:
    if cls not in classes:
        raise source.error(at, f"unknown class '{cls}'", names.suggest(cls, list(classes), "queues.yaml classes"))


# Keys of an environment's queue override that are not queue attributes.
_OVERRIDE_ONLY = ("enabled", "monitors", "metrics")


def queues_in(env: Environment, inventory: Source, queues: tuple[Queue, ...], problems: Problems) -> tuple[Queue, ...]:
    """The inventory as this environment sees it: its queue overrides merged in, disabled queues left out.
    A queue whose override does not build is left out too, its problems kept in `problems`."""
    raw_by_name: dict[str, Any] = {}
    for raw in inventory.data["queues"]:
        raw_by_name.setdefault(raw["name"], raw)
    out = []
    for queue in queues:
        override = env.queues.get(queue.name, {})
        if override.get("enabled", True) is False:
            continue
        attributes = {k: v for k, v in override.items() if k not in _OVERRIDE_ONLY}
        if not attributes:
            out.append(queue)
            continue
        merged = deep_merge(raw_by_name[queue.name], attributes)
        built = problems.attempt(queue_from, merged, env.source, ("queues", queue.name))
        if built is not None:
            out.append(built)
    return tuple(out)
