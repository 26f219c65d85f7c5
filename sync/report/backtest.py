"""The `obs backtest` report: text, markdown, and the JSON contract (docs/backtest.md)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from sync.core.backtest.calibration import Calibration
from sync.core.backtest.compare import Comparison
from sync.core.backtest.replay import Replay
from sync.core.backtest.summary import Incident, Stats, audiences, incidents, stats
from sync.core.evaluation.notify import Notification
from sync.report import calibration as calibrated
from sync.report import markdown as md

_TYPE = {"no_data": "no data", "downtime_end": "renotify"}


@dataclass(frozen=True)
class Backtest:
    env: str
    start: datetime  # the period asked for
    end: datetime
    origin: datetime  # minute 0 of the replay
    source: str
    replay: Replay
    base: tuple[str, Comparison] | None = None  # the base revision, and how its pages compare
    calibration: Calibration | None = None  # the model's transitions against the real ones (--calibrate)

    def at(self, minute: int) -> datetime:
        return self.origin + timedelta(minutes=minute)

    @property
    def days(self) -> float:
        return (self.end - self.start).total_seconds() / 86400


def iso(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _short(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%d %H:%MZ")


def _notification(found: Backtest, n: Notification) -> dict[str, Any]:
    out: dict[str, Any] = {
        "at": iso(found.at(n.t)),
        "type": _TYPE.get(n.kind, n.kind),
        "to": sorted(n.targets),
        "paged": found.replay.paged(n),
    }
    if n.kind == "downtime_end":
        out["reason"] = "downtime ended"
    return out


def _incident(found: Backtest, i: Incident) -> dict[str, Any]:
    return {
        "queue": i.queue,
        "from": iso(found.at(i.start)),
        "to": iso(found.at(i.end)),
        "pages": i.pages,
        "monitors": list(i.monitors),
    }


def as_json(found: Backtest) -> str:
    replay = found.replay
    monitors = []
    for item in replay.monitors:
        s = stats(replay, item)
        monitors.append(
            {
                "key": item.key,
                "queue": item.queue,
                "alerts": s.alerts,
                "pages": s.pages,
                "pages_over_arrival_range": list(s.pages_range),
                "minutes_in_alert": s.alert_minutes,
                "flaps": s.flaps,
                "longest_alert": None
                if s.longest is None
                else {"at": iso(found.at(s.longest[0])), "minutes": s.longest[1]},
                "notifications": [_notification(found, n) for n in item.sent],
            }
        )
    body = {
        "env": found.env,
        "period": {"from": iso(found.start), "to": iso(found.end)},
        "source": found.source,
        "reading": replay.readings[0],
        "readings": list(replay.readings),
        "monitors": monitors,
        "not_backtested": [{"key": key, "why": why} for key, why in replay.not_backtested],
        "incidents": [_incident(found, i) for i in incidents(replay)],
        "audiences": [
            {"audience": h.audience, "to": list(h.handles), "notifications": h.notifications, "pages": h.pages}
            for h in audiences(replay)
        ],
        "assumptions": [{"code": a.code, "text": a.text} for a in replay.assumptions],
    }
    if found.base is not None:
        body["base"] = comparison_json(found, *found.base)
    if found.calibration is not None:
        body["calibration"] = calibrated.as_json(found.calibration, found.at)
    return json.dumps(body, indent=2) + "\n"


def _range(lo: int, hi: int) -> str:
    return str(lo) if lo == hi else f"{lo}-{hi}"


def _longest(found: Backtest, s: Stats) -> str:
    return "-" if s.longest is None else f"{s.longest[1]} min from {_short(found.at(s.longest[0]))}"


def headline(found: Backtest) -> list[str]:
    replay = found.replay
    all_stats = [stats(replay, item) for item in replay.monitors]
    lo = sum(s.pages_range[0] for s in all_stats)
    hi = sum(s.pages_range[1] for s in all_stats)
    heard = {h.audience: h for h in audiences(replay)}
    found_incidents = incidents(replay)
    return [
        f"obs backtest {found.env}: {_short(found.start)} to {_short(found.end)} ({found.days:g} days), "
        f"from {found.source}, at the {replay.readings[0]}",
        f"page ({', '.join(heard['page'].handles) or 'no one'}): {heard['page'].pages} pages in "
        f"{len(found_incidents)} incidents (over the arrival range: {_range(lo, hi)} pages)",
        f"chat ({', '.join(heard['chat'].handles) or 'no one'}): {heard['chat'].notifications} notifications",
    ]


def text(found: Backtest) -> str:
    replay = found.replay
    lines = headline(found)
    if found.base is not None:
        lines += ["", comparison_line(found, *found.base)]
    found_incidents = incidents(replay)
    if found_incidents:
        lines += ["", "incidents:"]
        for i in found_incidents:
            lines.append(
                f"  {i.queue}  {_short(found.at(i.start))} to {_short(found.at(i.end))}  {i.pages} "
                f"page{'s' * (i.pages != 1)}: {', '.join(i.monitors)}"
            )
    lines += ["", "monitors (alerts, pages, notifications, minutes in ALERT, flaps, longest alert):"]
    for item in replay.monitors:
        s = stats(replay, item)
        lines.append(
            f"  {s.key}: {s.alerts} alerts, {s.pages} pages ({_range(*s.pages_range)} over the arrival range), "
            f"{s.notifications} notifications, {s.alert_minutes} min in ALERT, {s.flaps} flaps, "
            f"longest {_longest(found, s)}"
        )
    if replay.not_backtested:
        lines += ["", f"not backtested ({len(replay.not_backtested)}):"]
        lines += [f"  {key}: {why}" for key, why in replay.not_backtested]
    codes = ", ".join(a.code for a in replay.assumptions)
    lines += ["", f"modelled assumptions: {codes} (obs test --verbose explains them)"]
    if found.calibration is not None:
        lines += calibrated.text(found.calibration, found.at)
    return "\n".join(lines) + "\n"


def markdown(found: Backtest) -> str:
    replay = found.replay
    lines = [f"**{line}**" if i == 0 else line for i, line in enumerate(headline(found))]
    lines = [lines[0], "", *(f"- {line}" for line in lines[1:]), ""]
    if found.base is not None:
        lines += [comparison_line(found, *found.base), ""]
    found_incidents = incidents(replay)
    if found_incidents:
        lines += ["| queue | from | to | pages | monitors |", "| --- | --- | --- | --- | --- |"]
        lines += [
            f"| {i.queue} | {_short(found.at(i.start))} | {_short(found.at(i.end))} | {i.pages} | "
            f"{', '.join(f'`{m}`' for m in i.monitors)} |"
            for i in found_incidents
        ]
        lines.append("")
    lines += [
        "| monitor | alerts | pages | notifications | min in ALERT | flaps | longest alert |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for item in replay.monitors:
        s = stats(replay, item)
        lines.append(
            f"| `{s.key}` | {s.alerts} | {_range(*s.pages_range)} | {s.notifications} | {s.alert_minutes} | "
            f"{s.flaps} | {_longest(found, s)} |"
        )
    if replay.not_backtested:
        lines += ["", f"Not backtested ({len(replay.not_backtested)}):", ""]
        lines += [f"- `{key}`: {why}" for key, why in replay.not_backtested]
    if found.calibration is not None:
        lines += calibrated.markdown(found.calibration, found.at)
    return "\n".join(lines) + "\n"


def _named(found: Backtest, i: Incident) -> str:
    return f"{i.queue} {_short(found.at(i.start))} ({', '.join(i.monitors)})"


def comparison_line(found: Backtest, ref: str, c: Comparison) -> str:
    """ "prod: 11 pages in 14 days -> 3; these 2 incidents would no longer page: ...; 1 new page: ..."."""
    parts = [f"{found.env}: {c.base_pages} pages in {found.days:g} days at {ref} -> {c.head_pages}"]
    if c.gone:
        what = "this incident" if len(c.gone) == 1 else f"these {len(c.gone)} incidents"
        parts.append(f"{what} would no longer page: " + ", ".join(_named(found, i) for i in c.gone))
    if c.new:
        what = "1 new page" if len(c.new) == 1 else f"{len(c.new)} new pages"
        parts.append(f"{what}: " + ", ".join(_named(found, i) for i in c.new))
    return "; ".join(parts)


def comparison_json(found: Backtest, ref: str, c: Comparison) -> dict[str, Any]:
    return {
        "ref": ref,
        "pages": c.base_pages,
        "no_longer_paged": [_incident(found, i) for i in c.gone],
        "newly_paged": [_incident(found, i) for i in c.new],
    }


# What `obs diff --backtest` says per environment: the comparison, or why there is none.
Outcome = tuple[str, Backtest | str]  # (environment, its backtest or why it could not run)
SECTION_LIMIT = 4_000  # characters of incidents per environment in a pull-request comment; the rest is counted


def diff_lines(outcomes: list[Outcome]) -> list[str]:
    """Text: one line per environment."""
    return [f"backtest {env}: {_said(found)}" for env, found in outcomes]


def diff_markdown(outcomes: list[Outcome], rerun: str) -> str:
    """A pull-request comment's section: what the change would have paged over each environment's history."""
    if not outcomes:
        return ""
    lines = ["### Backtest: would this change have paged?", ""]
    for env, found in outcomes:
        said = _said(found)
        if len(said) > SECTION_LIMIT:
            cut = said.rfind(", ", 0, SECTION_LIMIT)
            said = said[:cut] + f", … ({md.code(f'{rerun} --format text')} lists them all)"
        lines.append(f"- **{env}**: {said}" if isinstance(found, str) else f"- {said}")
    return "\n".join(lines) + "\n\n"


def diff_json(outcomes: list[Outcome]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for env, found in outcomes:
        if isinstance(found, str):
            out.append({"env": env, "error": found})
        elif found.base is not None:
            out.append(
                {
                    "env": env,
                    "from": iso(found.start),
                    "to": iso(found.end),
                    "source": found.source,
                    "pages": {"base": found.base[1].base_pages, "head": found.base[1].head_pages},
                    "no_longer_paged": [_incident(found, i) for i in found.base[1].gone],
                    "newly_paged": [_incident(found, i) for i in found.base[1].new],
                }
            )
    return out


def _said(found: Backtest | str) -> str:
    if isinstance(found, str):
        return f"not backtested: {found}"
    if found.base is None:
        return f"{found.env}: the base has no {found.env}; nothing to compare"
    return comparison_line(found, *found.base) + f" (from {found.source}, {found.days:g} days)"
