"""The end of a sync checks every write whose answer was lost: one object per key, and failures that are real."""

from __future__ import annotations

import os
from collections.abc import Mapping
from contextlib import closing
from typing import Any

from sync.core.kinds import MONITOR, Kind
from sync.core.plan import Plan
from sync.datadog import apply, reads
from sync.datadog.client import Datadog, RequestFailed
from sync.datadog.credentials import endpoint
from sync.definitions.load import load
from sync.expand.desired import expand
from sync.report import changes as report

from .conftest import Obs
from .fakedd import LATE_COMMIT, LOST_RESPONSE, TIMED_OUT, FakeDatadog
from .test_sync import keys


def _some(obs: Obs, client: Datadog, count: int = 3) -> Plan:
    """The first few monitor changes of prod's plan."""
    plan = reads.plan(client, "prod", expand(load(obs.definitions), "prod"))
    return Plan(plan.env, tuple(c for c in plan.pending if c.kind == MONITOR)[:count])


def _client(timeout: float) -> closing[Datadog]:
    return closing(Datadog(endpoint(os.environ, "datadoghq.com", "prod"), timeout=timeout, backoff=0.01))


def test_creates_that_commit_after_the_timeout_leave_one_monitor_each(obs: Obs, dd: FakeDatadog) -> None:
    dd.faults.late_commit_rate, dd.faults.timeout_seconds = 1.0, 0.4  # every create: no answer, then committed
    with _client(timeout=0.2) as client:
        plan = _some(obs, client)
        outcomes = apply.apply(plan, client)
    # Each try commits late, so a lookup may miss it and create again (the deletes of duplicates too are late).
    assert sum(r.status == LATE_COMMIT and r.method == "POST" for r in dd.log) > 3
    live = keys(dd)
    assert {c.key for c in plan.changes} == set(live) and set(live.values()) == {1}
    assert all(o.ok for o in outcomes), outcomes
    assert any("a duplicate from a create whose answer was lost" in o.note for o in outcomes), outcomes
    assert {o.id for o in outcomes} == {str(i) for i in dd.monitors}


class _CreatesLoseEveryAnswer(Datadog):
    """Every create fails as if its answer were lost (a 502 from a proxy); none reaches the API."""

    def create(self, kind: Kind, body: Mapping[str, Any]) -> dict[str, Any]:
        raise RequestFailed(f"POST /api/v1/{kind}", "HTTP 502: Bad Gateway", 502, ambiguous=True)


def test_a_create_that_never_committed_is_reported_failed_and_is_not_there(obs: Obs, dd: FakeDatadog) -> None:
    where = endpoint(os.environ, "datadoghq.com", "prod")
    with closing(_CreatesLoseEveryAnswer(where, timeout=1.0, backoff=0.01)) as client:  # a short settle (2 s)
        (outcome,) = apply.apply(_some(obs, client, count=1), client)
    assert not outcome.ok and "not created: its key is not there" in outcome.error
    assert not outcome.doubtful  # checked: reported as failed, not uncertain
    assert dd.monitors == {}


def test_when_nothing_answers_a_failed_create_is_reported_uncertain(obs: Obs, dd: FakeDatadog) -> None:
    with _client(timeout=0.2) as client:
        plan = _some(obs, client, count=1)
        dd.faults.timeout_rate, dd.faults.timeout_seconds = 1.0, 0.4  # no answer to anything, and nothing done
        (outcome,) = apply.apply(plan, client)
    assert any(r.status == TIMED_OUT for r in dd.log)
    assert not outcome.ok and "uncertain: it may have been made, and checking failed" in outcome.error
    assert outcome.doubtful  # reported as uncertain, not as failed
    text = report.outcomes([outcome], dry_run=False, seconds=1.0)
    assert text.startswith("uncertain: create monitor") and "1 failed (1 uncertain" in text


def test_an_update_whose_answers_were_all_lost_but_applied_is_reported_done(obs: Obs, dd: FakeDatadog) -> None:
    assert obs("sync", "--env", "prod") == 0
    prod = obs.definitions / "environments" / "prod.yaml"
    prod.write_text(prod.read_text().replace("renotify_interval: 60", "renotify_interval: 30"))
    with _client(timeout=2) as client:
        plan = _some(obs, client, count=2)
        dd.faults.lost_response_rate = 1.0  # every write is committed, and its answer lost
        dd.reset_log()
        outcomes = apply.apply(plan, client)
    assert sum(r.status == LOST_RESPONSE for r in dd.log) == 2 * 5  # five tries each
    assert all(o.ok and o.note == "updated, although its answer was lost" for o in outcomes), outcomes
    changed = {c.id for c in plan.changes}
    assert {str(i) for i, m in dd.monitors.items() if m["options"].get("renotify_interval") == 30} >= changed
