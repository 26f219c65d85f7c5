"""The pure preview: who gets paged, fields only the base has, and a comment that always fits."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from sync.core.diff import FieldChange
from sync.core.kinds import MONITOR
from sync.core.paging import ALWAYS, AudienceChange, routes
from sync.core.plan import Action
from sync.core.resources import Resource
from sync.definitions.model import Definitions
from sync.expand.desired import expand
from sync.preview.comment import BUDGET, MARKER, comment, size
from sync.preview.compare import compare
from sync.preview.report import audience, change_of, text


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        ("Disk full.\n{{#is_alert}}@pagerduty-ops{{/is_alert}}", {"alert": {"@pagerduty-ops"}}),
        (
            "Tell @team-search and @jane.doe@example.com.\n{{#is_warning}}@slack-a @slack-b.{{/is_warning}}",
            {ALWAYS: {"@team-search", "@jane.doe@example.com"}, "warning": {"@slack-a", "@slack-b"}},
        ),
        (
            "{{#is_recovery}}@slack-x{{/is_recovery}}{{#is_warning_recovery}}@slack-y{{/is_warning_recovery}}"
            "{{#is_no_data}}@opsgenie-z{{/is_no_data}}",
            {"recovery": {"@slack-x"}, "warning_recovery": {"@slack-y"}, "no_data": {"@opsgenie-z"}},
        ),
        (
            '{{#is_alert}}{{#is_match "queue.name" "critical"}}@pagerduty-a{{/is_match}} @slack-b{{/is_alert}}',
            {"alert": {"@pagerduty-a", "@slack-b"}},  # a tag filter is not a state: it narrows the alert
        ),
        (
            "{{^is_alert}}@slack-calm{{/is_alert}} mail ops@example.com or see https://x.io/@me",
            {"not_alert": {"@slack-calm"}},
        ),
        (
            "{{^is_alert}}@slack-calm{{/is_alert}} Always: @pagerduty-ops",
            {"not_alert": {"@slack-calm"}, ALWAYS: {"@pagerduty-ops"}},
        ),
        ("{{value}} s waited, nobody told", {}),
    ],
)
def test_who_a_message_notifies(message: str, expected: dict[str, set[str]]) -> None:
    assert routes(message) == {severity: frozenset(targets) for severity, targets in expected.items()}


def test_a_field_only_the_base_has_is_a_change(example: Definitions) -> None:
    """The plan looks at the head's fields only; a dropped warning threshold must still show."""
    head = expand(example, "prod")
    base = [copy.deepcopy(r) for r in head]
    low_dlq = next(i for i, r in enumerate(base) if r.key == "prod/low/dlq")
    body: dict[str, Any] = copy.deepcopy(dict(base[low_dlq].body))
    body["options"]["thresholds"]["warning"] = 5
    body["options"]["renotify_interval"] = 15
    base[low_dlq] = Resource(MONITOR, "prod/low/dlq", body, "prod", "low")
    base.append(Resource(MONITOR, "prod/gone/age", {"name": "[prod] gone: age"}, "prod", "gone"))

    found = compare("main", "working tree", {"prod": base}, {"prod": head}, ["prod"])

    (plan,) = found.plans
    assert plan.count()["unchanged"] == len(head) - 1
    delete, update = plan.pending  # by key
    assert (update.action, update.key, update.id) == (Action.UPDATE, "prod/low/dlq", None)
    assert update.fields == (
        FieldChange("options.renotify_interval", 15, None),  # chat is not renotified
        FieldChange("options.thresholds.warning", 5, None),
    )
    assert (delete.action, delete.key, delete.queue, delete.id) == (Action.DELETE, "prod/gone/age", "gone", None)
    assert "options.thresholds.warning: 5 -> null" in text(found)


@pytest.mark.parametrize(
    ("old", "new", "shown"),
    [
        (30, 60, "30 -> 60"),
        (["a", "b"], ["b", "c"], 'added "c"; removed "a"'),
        (["a", "b"], ["b", "a"], 'reordered: ["a", "b"] -> ["b", "a"]'),
        ("one\ntwo\n", "one\nthree\n", "text changed, +1 -1 lines"),
        (None, "x" * 400, f'null -> "{"x" * 279}... (402 characters)'),
    ],
)
def test_how_a_field_change_reads(old: Any, new: Any, shown: str) -> None:
    assert change_of(FieldChange("p", old, new)) == shown


def _monitor(env: str, queue: str, index: int, message: str) -> Resource:
    body = {"name": f"[{env}] {queue}: monitor {index}", "message": message, "options": {"renotify_interval": 60}}
    return Resource(MONITOR, f"{env}/{queue}/m{index:04d}", body, env, queue)


def _changed(env: str, count: int, queues: int, targets: int) -> tuple[list[Resource], list[Resource]]:
    """`count` monitors whose message, paged team and renotify interval change, spread over queues and teams."""
    paragraph = "\n".join(f"Line {n} of what to do when this fires." for n in range(8))
    base = [_monitor(env, f"q{i % queues:04d}", i, f"{paragraph}\n@team-{i % targets}") for i in range(count)]
    head = []
    for resource in base:
        body = copy.deepcopy(dict(resource.body))
        body["message"] = body["message"].replace("Line 3", "Line three").replace("@team-", "@team-new-")
        body["options"]["renotify_interval"] = 30
        head.append(Resource(MONITOR, resource.key, body, env, resource.queue))
    return base, head


def _comment(envs: dict[str, int], queues: int = 10, targets: int = 1) -> str:
    base, head = {}, {}
    for env, count in envs.items():
        base[env], head[env] = _changed(env, count, queues, targets)
    return comment(compare("main", "working tree", base, head, sorted(envs)), "obs diff --base main")


def test_a_small_change_keeps_every_detail() -> None:
    out = _comment({"prod": 3})
    assert out.startswith(MARKER + "\n")
    assert "Left out" not in out
    assert "    -Line 3 of what to do when this fires.\n    +Line three of what to do when this fires.\n" in out
    assert "  - `options.renotify_interval`: `60` → `30`\n" in out


@pytest.mark.parametrize(
    ("count", "queues", "statement"),
    [
        (150, 10, "the line diffs of 45 text fields"),
        (400, 10, "the 160 field changes of 80 updated resources; the line diffs of 320 text fields"),
        (800, 10, "the list of 80 changed resources in 1 queue; the 1600 field changes of 800 updated resources"),
        (
            3000,
            3000,
            "the breakdown by queue (3000 groups); the list of 3000 changed resources in 3000 queues; "
            "the 6000 field changes of 3000 updated resources",
        ),
    ],
)
def test_detail_collapses_step_by_step_and_says_what_was_left_out(count: int, queues: int, statement: str) -> None:
    out = _comment({"prod": count}, queues)
    assert size(out) <= BUDGET
    assert (
        f"\n> Left out to fit a pull-request comment: {statement}. `obs diff --base main --env prod --format text`"
        in out
    )
    assert out.count("> Left out") == 1


def test_the_biggest_queue_gives_up_detail_first() -> None:
    base, head = _changed("prod", 400, queues=1, targets=1)
    small_base, small_head = _changed("dev", 2, queues=1, targets=1)
    found = compare(
        "main", "working tree", {"prod": base, "dev": small_base}, {"prod": head, "dev": small_head}, ["dev", "prod"]
    )
    out = comment(found, "obs diff --base main")
    assert size(out) <= BUDGET
    prod, dev = out.split("### `prod`")[1].split("### `dev`")
    assert "Left out" not in dev and dev.count("```diff") == 2
    assert "Left out to fit a pull-request comment: the 800 field changes of 400 updated resources." in prod


def test_who_gets_paged_makes_room_for_the_changes_and_says_what_it_left_out() -> None:
    out = _comment({"prod": 3000}, targets=3000)
    assert size(out) <= BUDGET
    assert (
        "Left out to fit a pull-request comment: the names of the monitors behind each change; 5625 more rows." in out
    )
    assert "<details>" in out, "some queues keep their resource lists"
    assert "| `prod` | always | `@team-0` | removed (1 → 0 monitors) |" in out


def test_who_gets_paged_without_monitor_names_counts_in_the_singular_too() -> None:
    change = AudienceChange("prod", (ALWAYS,), "@team-a", 0, 1, ("prod/q/m",), ())
    assert audience(change, "→", keys=False) == "added (0 → 1 monitor)"
    assert audience(change) == "added (0 -> 1 monitor); +1: prod/q/m"


def test_who_gets_paged_takes_the_room_the_changes_leave() -> None:
    """One queue too big to list leaves most of the budget to who-gets-paged, beyond its first half."""
    out = _comment({"prod": 3000}, queues=1, targets=3000)
    assert size(out) <= BUDGET
    assert "the list of 3000 changed resources in 1 queue" in out
    assert size(out.split("### Who gets paged\n")[1].split("### `prod`")[0]) > BUDGET // 2


def test_the_command_that_shows_everything_is_one_code_span() -> None:
    base, head = _changed("prod", 150, queues=10, targets=1)
    out = comment(compare("a`b", "working tree", {"prod": base}, {"prod": head}, ["prod"]), "obs diff --base 'a`b'")
    assert " ``obs diff --base 'a`b' --env prod --format text`` shows everything." in out


def test_the_comment_is_cut_when_even_the_summary_is_too_big() -> None:
    out = _comment({f"env{i:04d}": 1 for i in range(2000)})
    assert size(out) <= BUDGET
    assert out.endswith(
        "> Cut here to fit a pull-request comment. `obs diff --base main --format text` shows everything.\n"
    )


def test_markdown_survives_backticks_pipes_and_html_in_definitions() -> None:
    message = "Run `obs trace`.\n```\ncode | here\n```\n<details>"
    base = [Resource(MONITOR, "prod/a|b/m", {"name": "<b>x</b> | *y*", "message": message}, "prod", "a|b")]
    head = [
        Resource(
            MONITOR,
            "prod/a|b/m",
            {"name": "<b>x</b> | *y*", "message": message.replace("here", "there")},
            "prod",
            "a|b",
        )
    ]
    out = comment(compare("main", "feature`x", {"prod": base}, {"prod": head}, ["prod"]), "obs diff --base main")
    assert "## obs diff: `main` → ``feature`x``" in out
    assert "<details><summary><code>a|b</code>: 1 to update</summary>" in out
    assert "\\<b\\>x\\</b\\> \\| \\*y\\*" in out
    fenced = "    ````diff\n    @@ -2,3 +2,3 @@\n     ```\n    -code | here\n    +code | there\n     ```\n    ````\n"
    assert fenced in out, "a fence longer than any in the message keeps its HTML and backticks inert"


def test_a_title_in_the_comment_mentions_nobody_and_stays_on_one_line() -> None:
    def monitor(message: str) -> Resource:
        return Resource(MONITOR, "prod/q/m", {"name": "ask @alice\nor @bob", "message": message}, "prod", "q")

    out = comment(compare("main", "head", {"prod": [monitor("a")]}, {"prod": [monitor("b")]}, ["prod"]), "obs diff")
    assert "ask @&#8203;alice or @&#8203;bob" in out
    assert "@alice" not in out
