"""What the drift job posts: `obs plan --format markdown` shows values typed into the Datadog UI only as
code, so they can neither format the issue nor mention anyone."""

from __future__ import annotations

import re

from .conftest import Obs
from .fakedd import FakeDatadog

HOSTILE = "@acme/oncall <img src=x onerror=alert(1)> [click](https://evil.example) #12 **bold**"
_FENCED = re.compile(r"^( *)(`{3,})[^\n]*\n.*?^\1\2 *$", re.MULTILINE | re.DOTALL)
_SPAN = re.compile(r"(`+)(?!`).*?(?<!`)\1(?!`)", re.DOTALL)


def outside_code(markdown: str) -> str:
    """The markdown less its fenced blocks and code spans: what GitHub renders as markdown."""
    return _SPAN.sub("", _FENCED.sub("", markdown))


def test_live_values_typed_in_the_ui_are_shown_only_as_code(obs: Obs, dd: FakeDatadog) -> None:
    assert obs("sync", "--env", "prod") == 0, obs.err
    monitor_id, monitor = next((i, m) for i, m in dd.monitors.items() if "obs-key:prod/high/age" in m["tags"])
    fences = "\n```\n" + HOSTILE + "\n````\n~~~"
    dd.update_monitor(monitor_id, {"message": monitor["message"] + fences, "name": f"{HOSTILE} `a` ``` |"})
    dashboard_id = next(iter(dd.dashboards))
    dd.update_dashboard(dashboard_id, {**dd.dashboards[dashboard_id], "title": HOSTILE})

    assert obs("plan", "--env", "prod", "--format", "markdown") == 0, obs.err
    shown = obs.out
    assert "\n    -" + HOSTILE + "\n" in shown, "the message's live lines are in the diff block"
    assert f'`"{HOSTILE} `a` ``` |"`' in shown, "the live name is one code span"
    rendered = outside_code(shown)
    assert "- **update** monitor" in rendered and "- **update** dashboard" in rendered
    for raw in ("@acme", "<img", "[click](", "**bold**", "#12", "```"):
        assert raw not in rendered, raw
    assert "-@&#8203;acme on 1 monitor" in shown, "a handle the UI added is named without mentioning it"
