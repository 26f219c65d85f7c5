"""`obs maintenance start|end` when answers are lost or refused, and what ending tells the person on call."""

from __future__ import annotations

from collections import Counter
from datetime import UTC, datetime, timedelta

from sync.core.namespaces import NO_NAMESPACE
from sync.expand import maintenance

from .conftest import Obs
from .fakedd import LOST, LOST_RESPONSE, FakeDatadog, Targeted

START = ("maintenance", "start", "--env", "staging", "--queue", "high", "--for", "1h", "--timeout", "2")


def adhoc_live(dd: FakeDatadog) -> Counter[str]:
    """Live ad-hoc downtimes by env/queue/metric."""
    found: Counter[str] = Counter()
    for item in dd.downtimes.values():
        attributes = item["attributes"]
        key = maintenance.adhoc_key(str(attributes["message"] or ""))
        if key is not None and attributes["canceled"] is None:
            found[key] += 1
    return found


def lose(dd: FakeDatadog, metric: str, times: int) -> None:
    """The answers to the next `times` creates of this metric's ad-hoc downtime are lost after the commit."""
    holding = f"obs-adhoc:staging/high/{metric}"
    dd.faults.targeted.append(Targeted("POST", "/api/v2/downtime", holding, status=LOST, times=times))


def test_a_lost_answer_is_looked_up_and_the_start_finishes_without_duplicates(obs: Obs, dd: FakeDatadog) -> None:
    lose(dd, "age", 1)
    lose(dd, "depth", 1)
    assert obs(*START) == 0, obs.err
    assert Counter(r.status for r in dd.log)[LOST_RESPONSE] == 2
    live = adhoc_live(dd)
    assert live and set(live.values()) == {1}, live  # each muted metric once, found by key after its lost answer
    assert "staging/high/age" in live and "staging/high/depth" in live
    assert "refused" not in obs.out + obs.err and "muted " in obs.out

    # Run again (the person was unsure): nothing is created twice; what is muted already is said so.
    assert obs(*START) == 0, obs.err
    assert adhoc_live(dd) == live
    assert "already muted" in obs.out


def test_a_create_that_failed_without_committing_is_tried_again_once_its_lookup_misses(
    obs: Obs, dd: FakeDatadog
) -> None:
    # A 502 to a create is ambiguous (it may have committed): here it did not, so the lookup finds nothing.
    dd.faults.targeted.append(Targeted("POST", "/api/v2/downtime", "obs-adhoc:staging/high/age", 502, times=1))
    assert obs(*START) == 0, obs.err
    assert sum(r.status == 502 for r in dd.log) == 1
    live = adhoc_live(dd)
    assert live["staging/high/age"] == 1 and set(live.values()) == {1}


def test_a_refused_create_undoes_the_whole_start_and_says_nothing_is_muted(obs: Obs, dd: FakeDatadog) -> None:
    lose(dd, "age", 1)  # its answer is lost and found; the next one is refused
    dd.faults.targeted.append(Targeted("POST", "/api/v2/downtime", "obs-adhoc:staging/high/depth", 400, "quota"))
    assert obs(*START) == 1
    assert adhoc_live(dd) == Counter()  # undone: none of this start's downtimes is left
    assert "quota" in obs.err and "nothing of high is muted" in obs.err, obs.err
    assert "Traceback" not in obs.err


def test_ending_names_the_muted_monitors_still_alerting(obs: Obs, dd: FakeDatadog) -> None:
    assert obs("sync", "--env", "staging") == 0, obs.err
    assert obs(*START) == 0, obs.err
    by_key = {t.removeprefix("obs-key:"): i for i, m in dd.monitors.items() for t in m["tags"] if "obs-key:" in t}
    for monitor_id in by_key.values():
        dd.set_monitor_state(monitor_id, "OK")
    dd.set_monitor_state(by_key["staging/high/in_flight"], "No Data")  # it does not notify on no data
    dd.set_monitor_state(by_key["staging/high/age"], "Alert")
    dd.set_monitor_state(by_key["staging/high/depth"], "No Data")  # it pages on no data
    dd.set_monitor_state(by_key["staging/high/dlq"], "Alert")  # not muted by maintenance: not named
    assert obs("maintenance", "end", "--env", "staging", "--queue", "high", "--now") == 0, obs.err
    assert adhoc_live(dd) == Counter()
    alerting = [line for line in obs.out.splitlines() if line.startswith("  ")]
    assert [line.split()[:2] for line in alerting] == [["staging/high/age", "Alert:"], ["staging/high/depth", "No"]]
    # The ad-hoc downtimes notify on cancel, so Datadog tells on call again now.
    assert "Datadog notifies it now" in obs.out
    started = [d["attributes"] for d in dd.downtimes.values()]
    assert all("canceled" in a["notify_end_types"] for a in started)


def test_ending_lets_each_downtime_run_until_its_metrics_show_the_maintenance_over(obs: Obs, dd: FakeDatadog) -> None:
    """Ended early, the downtimes expire as a planned window's grace would: a stopped metric's once a restart
    shows (staging crawls: 25 min), a parked one's once the queue's drain grace is over too. Ended at once, the
    monitors would notify of the states they still hold from the maintenance's data."""
    assert obs("sync", "--env", "staging") == 0, obs.err
    assert obs(*START) == 0, obs.err
    before = datetime.now(UTC)
    assert obs("maintenance", "end", "--env", "staging", "--queue", "high") == 0, obs.err
    ends = {}
    for item in dd.downtimes.values():
        key = maintenance.adhoc_key(str(item["attributes"]["message"]))
        if key is not None:
            ends[key] = datetime.fromisoformat(item["attributes"]["schedule"]["end"].replace("Z", "+00:00"))
            assert item["attributes"]["canceled"] is None
    restart = maintenance.RESTART_MINUTES["crawler"]
    stopped = ends["staging/high/consumers_stuck"] - before
    assert timedelta(minutes=restart - 1) <= stopped <= timedelta(minutes=restart + 1)
    assert ends["staging/high/age"] - before > stopped  # parked work must drain as well
    assert "--now cancels at once" in obs.out


def test_ending_downtimes_that_do_not_notify_on_cancel_says_so(obs: Obs, dd: FakeDatadog) -> None:
    """An ad-hoc downtime made by an older obs notified only on expiry: its alerts stay unannounced."""
    assert obs("sync", "--env", "staging") == 0, obs.err
    by_key = {t.removeprefix("obs-key:"): i for i, m in dd.monitors.items() for t in m["tags"] if "obs-key:" in t}
    start = datetime.now(UTC).replace(microsecond=0)
    made = maintenance.adhoc(
        NO_NAMESPACE, "staging", "high", "age", start, start + timedelta(hours=1), "by an older obs"
    )
    body = {**made, "notify_end_types": ["expired"]}
    dd.create_downtime(body)
    dd.set_monitor_state(by_key["staging/high/age"], "Warn")
    assert obs("maintenance", "end", "--env", "staging", "--queue", "high", "--now") == 0, obs.err
    assert "staging/high/age" in obs.out and "will not notify again until it changes state" in obs.out, obs.out
