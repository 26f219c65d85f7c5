"""Writes whose answers were lost, found at the end of the run: what depends on them is written in the same run,
the downtime list is read once per check, and a refused SLO costs the dashboard one widget, not the dashboard."""

from __future__ import annotations

import json
import math
from collections import Counter
from typing import Any

from sync.core.kinds import DOWNTIME

from .conftest import Obs
from .fakedd import LOST, FakeDatadog, Targeted
from .test_sync import changes, keys


def downtime_keys(dd: FakeDatadog) -> Counter[str | None]:
    live = [d["attributes"] for d in dd.downtimes.values() if d["attributes"]["canceled"] is None]
    return Counter(DOWNTIME.owner(a) for a in live)


def slo_widgets(dashboard: dict[str, Any]) -> list[str]:
    found = []

    def walk(widgets: list[dict[str, Any]]) -> None:
        for widget in widgets:
            definition = widget["definition"]
            if definition["type"] == "slo":
                found.append(definition["slo_id"])
            walk(definition.get("widgets") or [])

    walk(dashboard["widgets"])
    return sorted(found)


def test_lost_downtime_answers_are_checked_with_one_read_of_the_downtime_list(obs: Obs, dd: FakeDatadog) -> None:
    theirs = 430
    for index in range(theirs):
        dd.create_downtime(
            {"scope": "*", "monitor_identifier": {"monitor_tags": [f"team:t{index}"]}, "message": f"hand-made {index}"}
        )
    dd.faults.targeted.append(Targeted("POST", "/api/v2/downtime", "", status=LOST, times=12))
    assert obs("sync", "--env", "prod", "--timeout", "1") == 0, obs.out
    ours = downtime_keys(dd)
    mine = {key: count for key, count in ours.items() if key is not None}
    assert ours[None] == theirs and mine and set(mine.values()) == {1}  # no duplicate
    pages = math.ceil((theirs + len(mine)) / 100)
    # One read to plan and one to check every lost answer, however many they are.
    assert dd.calls("GET", "/api/v2/downtime") == 2 * pages, obs.out
    assert changes(obs.plan()) == {}


def test_a_composite_whose_monitor_was_found_late_is_created_in_the_same_run(obs: Obs, dd: FakeDatadog) -> None:
    """Every create of one monitor commits and loses its answer, and the list shows it only seconds later: the
    lookups miss it, the end-of-run check finds it (and deletes the copies), and the composites over it are
    written then."""
    dd.faults.list_lag = 3.0
    dd.faults.targeted.append(Targeted("POST", "/api/v1/monitor", '"obs-key:prod/low/messages_waiting"', status=LOST))
    assert obs("sync", "--env", "prod", "--timeout", "2") == 0, obs.out
    assert "has no ID yet" not in obs.out
    dd.faults.list_lag = 0.0
    assert set(keys(dd).values()) == {1} and "prod/low/consumers_stuck" in keys(dd)
    assert changes(obs.plan()) == {}


def test_burn_rate_alerts_and_the_widget_of_an_slo_found_late_are_written_in_the_same_run(
    obs: Obs, dd: FakeDatadog
) -> None:
    dd.faults.list_lag = 3.0
    dd.faults.targeted.append(Targeted("POST", "/api/v1/slo", '"obs-key:prod/high/slo"', status=LOST))
    assert obs("sync", "--env", "prod", "--timeout", "2") == 0, obs.out
    dd.faults.list_lag = 0.0
    assert set(keys(dd).values()) == {1} and "prod/high/slo-fast-burn" in keys(dd)
    (dashboard,) = dd.dashboards.values()
    assert slo_widgets(dashboard) == sorted(dd.slos)
    assert changes(obs.plan()) == {}


def test_a_refused_slo_leaves_its_widget_out_of_the_dashboard_and_says_so(obs: Obs, dd: FakeDatadog) -> None:
    dd.faults.targeted.append(Targeted("POST", "/api/v1/slo", '"obs-key:prod/critical/slo"', 400, "SLO quota exceeded"))
    assert obs("sync", "--env", "prod") == 1
    assert "failed: create slo prod/critical/slo: POST /api/v1/slo: HTTP 400: SLO quota exceeded" in obs.out
    (dashboard,) = dd.dashboards.values()  # the dashboard is there, with the SLOs that are
    assert len(dd.slos) == 2 and slo_widgets(dashboard) == sorted(dd.slos)
    notes = [line for line in obs.out.splitlines() if "prod/oncall" in line]
    assert any("without" in line and "slo prod/critical/slo" in line for line in notes), obs.out
    # The monitors keep their link to the dashboard; only the critical queue's burn-rate alerts wait.
    assert "sent without its link to dashboard" not in obs.out
    failed = set(changes(obs.plan()))
    assert failed == {"prod/critical/slo", "prod/critical/slo-fast-burn", "prod/critical/slo-slow-burn", "prod/oncall"}
    assert json.dumps(dashboard).count("${") == 0
