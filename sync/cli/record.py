"""`obs test --record`: a window of a queue's real history, replayed as `obs backtest` replays it, written as a
scenario whose expectations are what the monitors did, for a person to edit to what on call needs."""

from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path

import yaml

from sync.aws.backtest.cache import Cache
from sync.cli import backtest, replaying
from sync.cli.conventions import Exit
from sync.core.backtest import record
from sync.core.backtest.fetched import SOURCES
from sync.core.backtest.readings import History, readings
from sync.core.backtest.replay import Replay
from sync.core.evaluation import notes
from sync.core.evaluation.series import Segment
from sync.definitions.load import load
from sync.errors import ObsError
from sync.expand.naming import PlacedQueue, place
from sync.expand.scenario_series import placement_of
from sync.report.backtest import iso

MAX_MINUTES = 20160  # a scenario's longest duration, and the earliest `from` (14 days)


def run(args: argparse.Namespace) -> int:
    out = _out(args)
    if not args.env or not args.queue or not args.start or not args.end:
        raise ObsError.of("--record needs --env, --queue, --from and --to", "give all four, and --out")
    root: Path = args.definitions
    source: str = args.source
    side = replaying.side(load(root), args.env, [args.queue], source)
    now = datetime.now(UTC).replace(second=0, microsecond=0)
    period = backtest.period_of(args.start, args.end, 0, now, source)
    minutes = int((period.end - period.start).total_seconds() // 60)
    if not 0 < minutes <= MAX_MINUTES:
        raise ObsError.of(
            f"the window from {iso(period.start)} to {iso(period.end)} is {minutes} minutes",
            f"give --to after --from, at most {MAX_MINUTES} minutes (14 days) later: a scenario's longest",
        )
    cache = Cache(None if args.no_cache else root / backtest.CACHE)
    fetched, history = replaying.read_history([side], period, source, cache)
    used: set[notes.Assumption] = set()
    replayed = replaying.replay_side(
        side, [args.queue], period, fetched, readings(history, side.env.metrics_source, used), used
    )
    queue = next(q for q in side.defs.env_queues[side.env.name] if q.name == args.queue)
    text = render(args.queue, side.env.name, period, minutes, place(side.env, queue), history, replayed, source)
    out.write_text(text, encoding="utf-8")
    print(f"wrote {out}: run it with obs test --scenario {out.stem}", file=sys.stderr)
    return Exit.OK


def _out(args: argparse.Namespace) -> Path:
    """The file to write, checked before anything is read."""
    out: Path | None = args.out
    if out is None:
        raise ObsError.of("--record writes a scenario file", "give --out scenarios/NAME.yaml")
    if out.suffix != ".yaml":
        raise ObsError.of(f"--out {out} is not a .yaml file", "give --out scenarios/NAME.yaml")
    if not out.parent.is_dir():
        raise ObsError.of(f"--out {out}: the folder {out.parent} does not exist", "create it, or give another --out")
    if out.exists() and not args.force:
        raise ObsError.of(f"--out {out} exists", "give another name, or --force to write over it")
    return out


def render(
    queue: str,
    env: str,
    period: replaying.Period,
    minutes: int,
    placed: PlacedQueue,
    history: Sequence[History],
    replayed: Replay,
    source: str,
) -> str:
    """The scenario file: a header that says where it comes from, then the scenario, one series segment a line."""
    warmup = period.warmup
    lines = [
        f"# Recorded by obs test --record from {SOURCES[source]}: queue {queue} in {env},",
        f"# {iso(period.start)} (minute 0) to {iso(period.end)}; the {warmup} minutes before minute 0 are each",
        "# series' history (from:), so the monitors' first windows are full.",
        "# The expectations are what the monitors did in the replay of that window (obs backtest's model, the",
        "# latest of its readings), not what on call needs: edit them to that, and move incident_at to when the",
        "# incident began (the bounds count from it), before committing this file.",
    ]
    series, skipped = _series(history, placed, warmup, minutes)
    lines += [f"# Not recorded: {line}" for line in skipped]
    name = f"{queue} in {env} from {iso(period.start)} (recorded)"
    top = {
        "name": name,
        "queue": queue,
        "environments": [env],
        "starts_at": iso(period.start),
        "incident_at": 0,
        "duration": minutes,
    }
    lines += [f"{k}: {_flow(v)}" for k, v in top.items()]
    begun = record.start(replayed, env)
    if begun is not None:
        lines.append(f"start: {_flow({'alerting': list(begun.alerting), 'since': begun.since})}")
    lines.append("series:")
    for head, segments in series:
        first, *rest = head.items()
        lines += [f"  - {first[0]}: {_flow(first[1])}", *(f"    {k}: {_flow(v)}" for k, v in rest), "    shape:"]
        lines += [f"      - {segment_line(s)}" for s in segments]
    lines.append("expect:")
    for expected in record.expectations(replayed, env):
        lines.append(f"  - {_flow({'monitor': expected.monitor, **_expectation(expected)})}")
    return "\n".join(lines) + "\n"


def _series(
    history: Sequence[History], placed: PlacedQueue, warmup: int, minutes: int
) -> tuple[list[tuple[Mapping[str, object], tuple[Segment, ...]]], list[str]]:
    out: list[tuple[Mapping[str, object], tuple[Segment, ...]]] = []
    skipped = []
    for h in sorted(history, key=lambda h: (h.metric, sorted(h.tags.items()))):
        where = placement_of(h.tags, placed)
        if where is None:
            skipped.append(f"{h.metric} {dict(sorted(h.tags.items()))}: not a series of the queue")
            continue
        if not any(m < warmup + minutes for m in h.points):
            skipped.append(f"{h.metric} of {where[0]}: no data in the window")
            continue
        shape = record.shape(h.points, warmup, minutes)
        head: dict[str, object] = {"metric": h.metric, "of": where[0]}
        if where[1] is not None:
            head["topic"] = where[1]
        if shape.idle_before:
            head["idle_before"] = True
        head["from"] = shape.first
        out.append((head, shape.segments))
    return out, skipped


def _expectation(e: record.Expected) -> dict[str, object]:
    kinds: dict[str, dict[str, object]] = {
        "pages": {"pages": {"within": e.within}},
        "alerts": {"alerts": {"within": e.within}},
        "warns_chat_only": {"warns_chat_only": True},
        "notifies_none": {"notifies": "none"},
        "pages_never": {"pages": "never"},
    }
    return kinds[e.kind]


def segment_line(s: Segment) -> str:
    """One segment of a shape as the file writes it: `{until: N, value: V}`, `{until: N, ramp: [A, B]}`, ..."""
    raw: dict[str, object] = {"until": s.until}
    if s.ramp is not None:
        raw["ramp"] = list(s.ramp)
    elif s.value is not None:
        raw["value"] = s.value
    else:
        raw["gap"] = True
    if s.every != 1:
        raw["every"] = s.every
    return _flow(raw)


def _flow(value: object) -> str:
    """One YAML value on one line; floats as Python writes them, which read back to the same bits."""
    text = yaml.safe_dump(value, default_flow_style=True, sort_keys=False, width=math.inf)
    return str(text).removesuffix("\n").removesuffix("\n...").strip()
