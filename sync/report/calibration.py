"""`obs backtest --calibrate` in the report: the model's transitions against the monitors' real ones, in text,
markdown and the JSON contract's `calibration` object (docs/backtest.md)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from sync.core.backtest.calibration import MATCH_MINUTES, Calibration, Checked, Transition

At = Callable[[int], datetime]  # a replay minute on the real clock


def _iso(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _short(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%d %H:%MZ")


def _state(state: str) -> str:
    return state.lower()


def _agreement(c: Calibration) -> str:
    return "-" if c.agreement is None else f"{c.agreement:.0%}"


def as_json(c: Calibration, at: At) -> dict[str, Any]:
    def one(t: Transition) -> dict[str, Any]:
        return {"state": _state(t.state), "at": _iso(at(t.minute))}

    def monitor(checked: Checked) -> dict[str, Any]:
        return {
            "key": checked.key,
            "source": checked.source,
            "matched": [
                {
                    "state": _state(m.model.state),
                    "model_at": _iso(at(m.model.minute)),
                    "real_at": _iso(at(m.real.minute)),
                    "offset_minutes": m.offset,
                }
                for m in checked.matched
            ],
            "missed": [one(t) for t in checked.missed],
            "extra": [one(t) for t in checked.extra],
        }

    return {
        "events": c.events,
        "tolerance_minutes": MATCH_MINUTES,
        "matched": c.matched,
        "missed": c.missed,
        "extra": c.extra,
        "agreement": None if c.agreement is None else round(c.agreement, 4),
        "offsets": [
            {
                "source": o.source,
                "count": o.count,
                "median_minutes": o.median,
                "min_minutes": o.low,
                "max_minutes": o.high,
            }
            for o in c.offsets
        ],
        "points_at": [{"code": p.assumption.code, "text": p.assumption.text, "why": p.why} for p in c.pointers],
        "not_in_datadog": list(c.not_live),
        "monitors": [monitor(checked) for checked in c.monitors],
    }


def headline(c: Calibration) -> str:
    return (
        f"calibration against Datadog's monitor events ({c.events} read): agreement {_agreement(c)}, "
        f"{c.matched} transitions matched, {c.missed} missed (real, not modelled), {c.extra} extra (modelled, "
        f"not real), within {MATCH_MINUTES} min"
    )


def _offsets(c: Calibration) -> list[str]:
    return [
        f"{o.source}: median {o.median:+g} min (from {o.low:+d} to {o.high:+d}, {o.count} matched)" for o in c.offsets
    ]


def _differences(checked: Checked, at: At) -> list[str]:
    out = []
    if checked.matched:
        shown = ", ".join(f"{_state(m.model.state)} {m.offset:+d}" for m in checked.matched)
        out.append(f"matched (real - model, min): {shown}")
    if checked.missed:
        out.append("missed: " + ", ".join(f"{_state(t.state)} at {_short(at(t.minute))}" for t in checked.missed))
    if checked.extra:
        out.append("extra: " + ", ".join(f"{_state(t.state)} at {_short(at(t.minute))}" for t in checked.extra))
    return out


def text(c: Calibration, at: At) -> list[str]:
    lines = ["", headline(c)]
    if c.offsets:
        lines += ["offsets, real - model, by metric source:", *(f"  {line}" for line in _offsets(c))]
    if c.pointers:
        lines.append("the differences point at:")
        for p in c.pointers:
            lines += [f"  {p.assumption.code}: {p.why}", f"    ({p.assumption.text})"]
    elif c.monitors:
        lines.append("the differences point at no modelled assumption")
    rows = [(checked, _differences(checked, at)) for checked in c.monitors]
    if any(found for _, found in rows):
        lines.append("per monitor:")
        lines += [f"  {checked.key} ({checked.source}): " + "; ".join(found) for checked, found in rows if found]
    if c.not_live:
        lines.append(f"not in Datadog, so not calibrated ({len(c.not_live)}): {', '.join(c.not_live)}")
    return lines


def markdown(c: Calibration, at: At) -> list[str]:
    lines = ["", f"**{headline(c)}**", ""]
    lines += [f"- {line}" for line in _offsets(c)]
    lines += [f"- points at **{p.assumption.code}**: {p.why}" for p in c.pointers]
    rows = [(checked, _differences(checked, at)) for checked in c.monitors]
    if any(found for _, found in rows):
        lines += ["", "| monitor | source | matched | missed | extra |", "| --- | --- | --- | --- | --- |"]
        lines += [
            f"| `{checked.key}` | {checked.source} | {len(checked.matched)} | {len(checked.missed)} | "
            f"{len(checked.extra)} |"
            for checked, found in rows
            if found
        ]
    if c.not_live:
        lines += ["", f"Not in Datadog, so not calibrated: {', '.join(f'`{k}`' for k in c.not_live)}"]
    return lines
