"""Ownership markers: user text (a window's description, a maintenance reason) can neither forge nor break them."""

from __future__ import annotations

from collections import Counter

import pytest

from sync.core.kinds import DASHBOARD, DOWNTIME, MONITOR
from sync.definitions.model import Definitions
from sync.expand.desired import expand

from .conftest import Obs
from .fakedd import FakeDatadog

PASTED = "managed-by:obs obs-key:prod/default/age/maintenance/nightly-migrations"
WINDOW_DESCRIPTION = (
    "description: Database migrations; events are parked in the default queue until the drain workflow runs."
)


def live_messages(dd: FakeDatadog) -> list[str]:
    return [str(d["attributes"]["message"]) for d in dd.downtimes.values() if d["attributes"]["canceled"] is None]


def test_the_key_is_read_from_the_last_line_only() -> None:
    message = f"[prod] maintenance x\n{PASTED}\nWhen: daily\n\nmanaged-by:obs obs-key:prod/high/age/maintenance/x"
    assert DOWNTIME.owner({"message": message}) == "prod/high/age/maintenance/x"
    # A marker line anywhere but last is user text: it neither makes an object ours nor names its key.
    assert DOWNTIME.owner({"message": f"{PASTED}\nby hand"}) is None
    assert DASHBOARD.owner({"description": f"{PASTED}\n\nsee the runbook"}) is None
    assert DASHBOARD.owner({"description": "On call.\n\nmanaged-by:obs obs-key:prod/oncall\n"}) == "prod/oncall"
    assert DOWNTIME.owner({"message": "managed-by:obs obs-key:prod/a b"}) is None  # not a key
    assert MONITOR.owner({"tags": ["managed-by:obs", "obs-key:prod/high/age"]}) == "prod/high/age"


def test_marker_text_in_a_window_description_is_refused_with_file_and_line(obs: Obs) -> None:
    prod = obs.definitions / "environments" / "prod.yaml"
    text = prod.read_text()
    assert WINDOW_DESCRIPTION in text
    prod.write_text(text.replace(WINDOW_DESCRIPTION, f'description: "Migrations.\\n{PASTED}"'))
    assert obs("validate") == 1
    line = text[: text.index(WINDOW_DESCRIPTION)].count("\n") + 1
    assert f"environments/prod.yaml:{line}: maintenance[0].description:" in obs.err, obs.err
    assert "managed-by:obs" in obs.err and "Traceback" not in obs.err


def test_a_description_with_a_marker_line_does_not_duplicate_its_downtimes(obs: Obs, dd: FakeDatadog) -> None:
    """Even where validation is bypassed (a definitions set from an older obs), user text above the marker
    line cannot make obs lose its downtimes: their number stays the same over three syncs."""
    assert obs("sync", "--env", "prod") == 0, obs.err
    synced = len(live_messages(dd))
    assert synced > 0
    # Put the pasted marker into the live messages as an older obs wrote them: in the middle of the message.
    for item in dd.downtimes.values():
        attributes = item["attributes"]
        lines = str(attributes["message"]).split("\n")
        attributes["message"] = "\n".join([lines[0], PASTED, *lines[1:]])
    for _ in range(2):
        assert obs("sync", "--env", "prod") == 0, obs.err
        assert len(live_messages(dd)) == synced, obs.out
    assert "0 unmanaged" in obs.out


def test_a_reason_with_a_marker_cannot_hand_ad_hoc_downtimes_to_the_next_sync(obs: Obs, dd: FakeDatadog) -> None:
    assert obs("sync", "--env", "staging") == 0, obs.err
    forged = "disk swap\nmanaged-by:obs obs-key:staging/high/age/maintenance/x"
    assert obs("maintenance", "start", "--env", "staging", "--queue", "high", "--reason", forged) == 1
    assert "--reason" in obs.err and "managed-by:obs" in obs.err and "Traceback" not in obs.err
    assert live_messages(dd) == []  # refused before anything was written


def test_a_reason_on_several_lines_is_kept_on_one(obs: Obs, dd: FakeDatadog) -> None:
    assert obs("sync", "--env", "staging") == 0, obs.err
    before = Counter(live_messages(dd))
    assert obs("maintenance", "start", "--env", "staging", "--queue", "high", "--reason", "disk\n swap\r\nnow") == 0
    started = [m for m in live_messages(dd) if m not in before]
    assert started and all("Reason: disk swap now\n" in m for m in started)
    assert obs("plan", "--env", "staging", "--detailed-exitcode") == 0, obs.out
    assert obs("maintenance", "list", "--env", "staging") == 0 and "ad-hoc  disk swap now" in obs.out


FORGED = ["managed-by:obs", "x obs-key:staging/a", "obs-adhoc:staging/high/age", "MANAGED-BY:OBS"]


@pytest.mark.parametrize("text", FORGED)
def test_marker_text_is_refused_in_a_dashboard_description(obs: Obs, text: str) -> None:
    board = obs.definitions / "dashboards" / "oncall.yaml"
    source = board.read_text()
    board.write_text(source.replace("description: |\n", f"description: |\n  {text}\n", 1))
    assert obs("validate") == 1
    assert "dashboards/oncall.yaml:5: description:" in obs.err, obs.err


def test_a_rendered_body_reads_back_as_the_resource_it_was(example: Definitions) -> None:
    """The one ownership reader (Kind.owner) gives the preview, reading a render of a base revision, the key and
    queue the expansion gave each resource, as the Datadog side reads the key of a live object."""
    for env in example.environments:
        for resource in expand(example, env.name):
            found = resource.kind.owner(resource.body)
            assert (found, resource.kind.queue(resource.key, resource.body)) == (resource.key, resource.queue)
