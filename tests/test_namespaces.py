"""Namespaces: two definitions sets in one Datadog org, each reading and touching only its own objects.

The two sets (tests/fixtures/namespaces) both have a queue named critical, so both have prod/critical/age.
"""

from __future__ import annotations

import json
import shutil
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from sync.core.kinds import DASHBOARD, DOWNTIME, MONITOR
from sync.core.namespaces import Mark, Ownership, from_line, from_tags, valid
from sync.core.plan import claimed, make_plan
from sync.core.resources import Resource

from .conftest import ROOT, Obs, Run, commit, git
from .fakedd import FakeDatadog

TEAMS = ROOT / "tests" / "fixtures" / "namespaces"


@pytest.fixture
def payments(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Obs:
    return Obs(_copy("payments", tmp_path), capsys)


@pytest.fixture
def search(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Obs:
    return Obs(_copy("search", tmp_path), capsys)


def _copy(team: str, tmp_path: Path) -> Path:
    target = tmp_path / team
    shutil.copytree(TEAMS / team, target)
    return target


def _inventory(obs: Obs, old: str, new: str) -> None:
    path = obs.definitions / "queues.yaml"
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new))


def changes(plan: dict[str, Any]) -> dict[str, str]:
    return {f"{c['kind']} {c['key']}": c["action"] for c in plan["changes"] if c["action"] != "unchanged"}


def monitor_ids(dd: FakeDatadog, namespace: str | None) -> set[int]:
    return {i for i, m in dd.monitors.items() if (MONITOR.mark(m) or Mark("")).namespace == namespace}


def live_ids(dd: FakeDatadog) -> set[str]:
    """Every live object's ID, canceled downtimes left out."""
    downtimes = {i for i, d in dd.downtimes.items() if d["attributes"]["canceled"] is None}
    return {*map(str, dd.monitors), *dd.dashboards, *dd.slos, *dd.corrections, *downtimes}


# -- the marker and its one reader


def test_a_namespace_has_one_spelling() -> None:
    assert valid("payments-jobs") and valid("a") and valid("team2")
    for bad in ("Payments-jobs", "payments_jobs", "-payments", "payments-", "payments--jobs", "2team", "", "a" * 41):
        assert not valid(bad), bad


def test_the_namespace_is_matched_whole_never_by_prefix_or_case() -> None:
    tags = ["managed-by:obs", "obs-namespace:payments-jobs", "obs-key:prod/critical/age"]
    assert from_tags(tags) == Mark("prod/critical/age", "payments-jobs")
    assert MONITOR.owner({"tags": tags}, Ownership("payments-jobs")) == "prod/critical/age"
    for other in (Ownership("payments"), Ownership("payments-jobs-eu"), Ownership(None), Ownership("search-jobs")):
        assert MONITOR.owner({"tags": tags}, other) is None, other
    # Two namespaces, or one no set can declare, make no mark at all: nobody owns the object.
    assert from_tags([*tags, "obs-namespace:search-jobs"]) is None
    assert from_tags(["managed-by:obs", "obs-namespace:Payments-Jobs", "obs-key:prod/critical/age"]) is None


def test_the_marker_line_carries_the_namespace() -> None:
    ours = Ownership("payments-jobs")
    line = ours.line("prod/oncall")
    assert line == "managed-by:obs obs-namespace:payments-jobs obs-key:prod/oncall"
    assert from_line(f"On call.\n\n{line}") == Mark("prod/oncall", "payments-jobs")
    assert DASHBOARD.owner({"description": line}, ours) == "prod/oncall"
    assert DASHBOARD.owner({"description": line}, Ownership("payments")) is None
    assert DASHBOARD.owner({"description": line}) is None  # a set without a namespace owns none of it
    old = "managed-by:obs obs-key:prod/critical/age/maintenance/x"
    assert DOWNTIME.owner({"message": old}) == "prod/critical/age/maintenance/x"
    assert DOWNTIME.owner({"message": old}, ours) is None
    assert DOWNTIME.owner({"message": old}, Ownership("payments-jobs", adopt_unnamespaced=True)) is not None
    assert ours.adhoc_key(ours.adhoc_line("prod/critical/age")) == "prod/critical/age"
    assert Ownership("search-jobs").adhoc_key(ours.adhoc_line("prod/critical/age")) is None
    assert Ownership().adhoc_key(ours.adhoc_line("prod/critical/age")) is None


def test_objects_without_a_namespace_are_only_ever_taken_over_never_deleted() -> None:
    """Taking over: an object written without a namespace is adopted where the definitions want its key and
    none of the namespace's has it; a twin of one of ours, or one of a key no longer wanted, is left alone."""
    ours = Ownership("payments-jobs", adopt_unnamespaced=True)

    def body(key: str, namespace: str | None) -> dict[str, Any]:
        tags = Ownership(namespace).tags(key)
        return {"name": key, "type": "query alert", "query": "q", "tags": sorted(tags)}

    wanted = [Resource(MONITOR, key, body(key, "payments-jobs"), "prod", "q") for key in ("prod/a/age", "prod/b/age")]
    live = [
        claimed(MONITOR, "1", body("prod/a/age", "payments-jobs"), ours),
        claimed(MONITOR, "2", body("prod/a/age", None), ours),  # a twin of ours
        claimed(MONITOR, "3", body("prod/b/age", None), ours),  # taken over
        claimed(MONITOR, "4", body("prod/gone/age", None), ours),  # no longer wanted: not ours to delete
        claimed(MONITOR, "5", body("prod/b/age", "search-jobs"), ours),  # another set's
    ]
    plan = make_plan("prod", wanted, live)
    assert {(c.action.value, c.id) for c in plan.changes} == {("unchanged", "1"), ("update", "3")}
    (adopted,) = [c for c in plan.changes if c.id == "3"]
    assert "written without a namespace" in adopted.note and not adopted.replace
    assert live[4].foreign and live[4].key is None and not plan.unmanaged


def test_a_bad_namespace_is_refused_with_file_line_and_fix(payments: Obs) -> None:
    _inventory(payments, "namespace: payments-jobs", "namespace: Payments_Jobs")
    assert payments("validate") == 1
    assert "queues.yaml:3: namespace:" in payments.err and "lowercase" in payments.err, payments.err
    assert "Traceback" not in payments.err


def test_adopting_needs_a_namespace(payments: Obs) -> None:
    _inventory(payments, "namespace: payments-jobs\n", "adopt_unnamespaced: true\n")
    assert payments("validate") == 1
    assert "queues.yaml:3: adopt_unnamespaced:" in payments.err and "namespace:" in payments.err, payments.err


# -- two sets in one org


def test_two_sets_synced_in_turns_each_plan_nothing_after_the_other(
    payments: Obs, search: Obs, dd: FakeDatadog
) -> None:
    assert payments("sync", "--env", "prod") == 0, payments.err
    assert search("sync", "--env", "prod") == 0, search.err
    for _ in range(2):
        assert changes(payments.plan()) == {}
        assert changes(search.plan()) == {}
        assert payments("sync", "--env", "prod") == 0 and search("sync", "--env", "prod") == 0
    # Both have prod/critical/age: two monitors, one per namespace.
    ages = [m for m in dd.monitors.values() if "obs-key:prod/critical/age" in m["tags"]]
    assert sorted(str((MONITOR.mark(m) or Mark("")).namespace) for m in ages) == ["payments-jobs", "search-jobs"]
    boards = Counter(DASHBOARD.mark(d) for d in dd.dashboards.values())
    assert boards == Counter([Mark("prod/oncall", "payments-jobs"), Mark("prod/oncall", "search-jobs")])


def test_removing_a_queue_from_one_set_never_touches_the_other(payments: Obs, search: Obs, dd: FakeDatadog) -> None:
    assert payments("sync", "--env", "prod") == 0 and search("sync", "--env", "prod") == 0
    before = {i: dict(m) for i, m in dd.monitors.items() if i in monitor_ids(dd, "payments-jobs")}
    dashboards = {i: dict(d) for i, d in dd.dashboards.items()}
    inventory = search.definitions / "queues.yaml"
    text = inventory.read_text()
    inventory.write_text(text[: text.index("  - name: indexing")])
    planned = changes(search.plan())
    deleted = {"monitor prod/indexing/age": "delete", "monitor prod/indexing/dlq": "delete"}
    assert planned == {**deleted, "dashboard prod/oncall": "update"}  # its runbook list loses the queue
    assert search("sync", "--env", "prod") == 0, search.err
    after = {i: m for i, m in dd.monitors.items() if i in monitor_ids(dd, "payments-jobs")}
    assert after == before  # not one of payments' monitors deleted or changed
    payments_board = next(i for i, d in dashboards.items() if "payments-jobs" in d["description"])
    assert dd.dashboards[payments_board] == dashboards[payments_board]
    assert changes(payments.plan()) == {}
    assert not any("obs-key:prod/indexing/" in t for m in dd.monitors.values() for t in m["tags"])


def test_a_maintenance_window_of_one_set_never_mutes_the_others_monitors(
    payments: Obs, search: Obs, dd: FakeDatadog
) -> None:
    assert search("sync", "--env", "prod") == 0 and payments("sync", "--env", "prod") == 0
    windows = [i for i, d in dd.downtimes.items() if "nightly-migrations" in str(d["attributes"]["message"])]
    assert len(windows) == 3  # age and both burn rates of payments' critical queue
    ours, theirs = monitor_ids(dd, "payments-jobs"), monitor_ids(dd, "search-jobs")
    for window in windows:
        muted = dd.muted_by(window)
        assert muted and muted <= ours, (muted, theirs)
    # search has the same queue and metrics: without the namespace in monitor_tags the window would mute them.
    unspaced = {**dd.downtimes[windows[0]]["attributes"]["monitor_identifier"]}
    unspaced["monitor_tags"] = [t for t in unspaced["monitor_tags"] if not t.startswith("obs-namespace:")]
    made = dd.create_downtime({"scope": "*", "monitor_identifier": unspaced, "message": "by hand"})
    assert dd.muted_by(str(made["id"])) & theirs


def test_ad_hoc_maintenance_of_one_set_never_touches_the_others(payments: Obs, search: Obs, dd: FakeDatadog) -> None:
    assert payments("sync", "--env", "prod") == 0 and search("sync", "--env", "prod") == 0
    start = ("maintenance", "start", "--env", "prod", "--queue", "critical", "--for", "1h")
    assert search(*start) == 0, search.err
    adhoc = [i for i, d in dd.downtimes.items() if "obs-adhoc:" in str(d["attributes"]["message"])]
    assert adhoc
    theirs = monitor_ids(dd, "search-jobs")
    assert all(dd.muted_by(i) and dd.muted_by(i) <= theirs for i in adhoc)
    # payments sees no ad-hoc window of its own, and ending its critical queue's ends none of search's.
    assert payments("maintenance", "list", "--env", "prod") == 0, payments.err
    assert "ad-hoc" not in payments.out and "nightly-migrations" in payments.out, payments.out
    assert payments("maintenance", "end", "--env", "prod", "--queue", "critical") == 0, payments.err
    assert "ended 0 ad-hoc downtimes" in payments.out, payments.out
    assert all(dd.downtimes[i]["attributes"]["canceled"] is None for i in adhoc)
    # payments' start is its own: search's is no reason to call its metrics muted already.
    assert payments(*start) == 0, payments.err
    assert "already muted" not in payments.out and "muted age" in payments.out, payments.out
    assert search("maintenance", "list", "--env", "prod") == 0
    assert "ad-hoc" in search.out and "nightly-migrations" not in search.out, search.out
    assert search("maintenance", "end", "--env", "prod", "--queue", "critical") == 0, search.err
    assert f"ended {len(adhoc)} ad-hoc downtimes" in search.out, search.out
    assert changes(payments.plan()) == {} and changes(search.plan()) == {}


# -- objects written before namespaces


def test_objects_written_without_a_namespace_are_adopted_only_when_the_definitions_say_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], dd: FakeDatadog
) -> None:
    old = Obs(_copy("payments", tmp_path / "old"), capsys)
    _inventory(old, "namespace: payments-jobs\n", "")
    assert old("sync", "--env", "prod") == 0, old.err
    before = live_ids(dd)
    assert monitor_ids(dd, None) and not monitor_ids(dd, "payments-jobs")
    # A namespace alone takes nothing over: the old objects are not its own, so nothing is updated or deleted.
    payments = Obs(_copy("payments", tmp_path / "new"), capsys)
    plan = payments.plan()
    assert set(changes(plan).values()) == {"create"}
    # With adopt_unnamespaced the plan takes each over in place, keeping its ID.
    _inventory(payments, "namespace: payments-jobs\n", "namespace: payments-jobs\nadopt_unnamespaced: true\n")
    plan = payments.plan()
    pending = [c for c in plan["changes"] if c["action"] != "unchanged"]
    assert pending and {c["action"] for c in pending} == {"update"}, changes(plan)
    assert all("adopts" in c["note"] and "without a namespace" in c["note"] and c["id"] for c in pending)
    assert len(pending) == len(before)
    assert payments("sync", "--env", "prod") == 0, payments.err
    assert live_ids(dd) == before  # nothing recreated: IDs, and the links that name them, are kept
    assert monitor_ids(dd, "payments-jobs") and not monitor_ids(dd, None)
    assert changes(payments.plan()) == {}
    # A second set that also says adopt_unnamespaced cannot take them back: they carry payments' namespace now.
    search = Obs(_copy("search", tmp_path / "other"), capsys)
    _inventory(search, "namespace: search-jobs\n", "namespace: search-jobs\nadopt_unnamespaced: true\n")
    assert set(changes(search.plan()).values()) == {"create"}
    assert search("sync", "--env", "prod") == 0, search.err
    assert changes(payments.plan()) == {}
    # Nor does the old set, without a namespace, see them as its own any more: it would create, never delete.
    assert set(changes(old.plan()).values()) == {"create"}


def test_a_set_without_a_namespace_never_touches_a_namespaced_one(payments: Obs, search: Obs, dd: FakeDatadog) -> None:
    assert payments("sync", "--env", "prod") == 0, payments.err
    before = {i: dict(m) for i, m in dd.monitors.items()}
    _inventory(search, "namespace: search-jobs\n", "")
    assert set(changes(search.plan()).values()) == {"create"}
    assert search("sync", "--env", "prod") == 0, search.err
    assert all(dd.monitors[i] == m for i, m in before.items())
    assert changes(search.plan()) == {} and changes(payments.plan()) == {}


# -- the offline preview owns as the live plan does


@pytest.mark.parametrize("adopt", [False, True])
def test_the_preview_owns_the_base_as_the_live_plan_owns_the_org(
    adopt: bool, tmp_path: Path, capsys: pytest.CaptureFixture[str], dd: FakeDatadog, plain_git: None, run: Run
) -> None:
    """Declaring a namespace: `obs diff` against the revision without one plans what `obs plan` plans live."""
    payments = Obs(_copy("payments", tmp_path), capsys)
    _inventory(payments, "namespace: payments-jobs\n", "")
    git(payments.definitions, "init", "-q")
    commit(payments.definitions, "base")
    assert payments("sync", "--env", "prod") == 0, payments.err
    spaced = "namespace: payments-jobs\n" + ("adopt_unnamespaced: true\n" if adopt else "")
    _inventory(payments, "classes:\n", f"{spaced}classes:\n")
    live = changes(payments.plan())
    code, out, err = run(payments.definitions, "--base", "HEAD", "--format", "json")
    assert code == 0, err
    (prod,) = json.loads(out)["environments"]
    previewed = {f"{c['kind']} {c['key']}": c["action"] for c in prod["changes"]}
    assert previewed == live
    assert set(live.values()) == ({"update"} if adopt else {"create"})
