"""Pure: pager load from `obs test`: pages per incident scenario and notifications per healthy day, per
environment. An incident should open one page per audience; a healthy day should notify nobody."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sync.core.evaluation.simulate import Result

# Expectations that say something must happen: a scenario with one of these is an incident.
_INCIDENT_KINDS = ("pages_within", "alerts_within", "one_incident", "recovers_within")


def is_incident(result: Result) -> bool:
    return any(e.kind in _INCIDENT_KINDS or (e.kind == "pages_count" and e.count) for e in result.case.expectations)


def by_env(results: Sequence[tuple[str, Result]]) -> dict[str, dict[str, Any]]:
    """Per environment: the incident scenarios' pages and the healthy scenarios' notifications per day."""
    out: dict[str, dict[str, Any]] = {}
    for env in sorted({r.case.env for _, r in results}):
        loaded = [r for _, r in results if r.case.env == env and r.load is not None]
        incidents = [r for r in loaded if is_incident(r)]
        healthy = [r for r in loaded if not is_incident(r)]
        pages = [r.load.pages for r in incidents if r.load is not None]
        notified = sum(r.load.notifications for r in healthy if r.load is not None)
        days = sum(r.load.minutes for r in healthy if r.load is not None) / 1440
        out[env] = {
            "incident_scenarios": len(incidents),
            "pages_per_incident": round(sum(pages) / len(pages), 2) if pages else None,
            "most_pages_in_an_incident": max(pages, default=None),
            "healthy_scenarios": len(healthy),
            "healthy_days": round(days, 2),
            "notifications_per_healthy_day": round(notified / days, 2) if days else None,
        }
    return out


def lines(results: Sequence[tuple[str, Result]]) -> list[str]:
    """One summary line per environment."""
    out = []
    for env, load in by_env(results).items():
        per_incident = load["pages_per_incident"]
        per_day = load["notifications_per_healthy_day"]
        out.append(
            f"pager load in {env}: "
            + (
                f"{per_incident:g} pages per incident scenario (at most {load['most_pages_in_an_incident']}, "
                f"{load['incident_scenarios']} scenarios)"
                if per_incident is not None
                else "no incident scenarios"
            )
            + ", "
            + (
                f"{per_day:g} notifications per healthy day ({load['healthy_scenarios']} scenarios, "
                f"{load['healthy_days']:g} days)"
                if per_day is not None
                else "no healthy scenarios"
            )
        )
    return out
