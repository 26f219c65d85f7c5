"""`obs diff` does not lie: each thing a list of field changes would hide is said, in every format, from
real git repositories."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from sync.definitions.load import load
from sync.expand.desired import expand
from sync.preview.comment import LIMIT, size
from tests.conftest import ROOT, Run, commit, git
from tests.test_diff import LOW_QUEUE, edit, generated_queues

FORMATS = ("text", "markdown", "json")

DEFAULT_QUEUE = """
  - name: default
    class: short
    description: Customer work that is not urgent (mail integration, scheduled and external triggers).
    slo_seconds: 300
    worker: {cluster: jobs, service: default-worker, min_tasks: 1, max_tasks: 20}
    dlq: {name: default-dlq, max_receive_count: 3, retention_seconds: 1209600}
    topics:
      - {name: jobs-default}
    runbook: https://runbooks.example.com/jobs/default
    owner: platform
"""


def outputs(run: Run, repo: Path, *args: str) -> dict[str, str]:
    found = {}
    for fmt in FORMATS:
        code, out, err = run(repo, "--base", "HEAD", "--format", fmt, *args)
        assert (code, err) == (0, "")
        found[fmt] = out
    return found


def warnings(out: str, kind: str) -> list[dict[str, str]]:
    return [w for w in json.loads(out)["warnings"] if w["kind"] == kind]


def test_deletions_the_sync_will_refuse_are_warned_per_environment(repo: Path, run: Run) -> None:
    originals = {name: (repo / name).read_text() for name in ("queues.yaml", "environments/prod.yaml")}
    base = expand(load(repo), "prod")
    doomed = sum(1 for r in base if r.queue in ("low", "default"))
    edit(repo, "queues.yaml", LOW_QUEUE, "")
    edit(repo, "queues.yaml", DEFAULT_QUEUE, "")
    edit(repo, "environments/prod.yaml", "queues: [low, default]\n    parking: [default]\n", "queues: [high]\n")
    out = outputs(run, repo)
    refused = warnings(out["json"], "mass-delete")
    assert [w["env"] for w in refused] == ["prod", "staging", "dev"]
    # Every object of low and default in prod, their downtimes included.
    refuse = f"the sync of prod will refuse to delete {doomed} of the {len(base)} objects"
    prod = f"{refuse} obs manages there (the limit is "
    assert prod in refused[0]["text"] and f"--max-deletes {doomed}" in refused[0]["text"]
    assert f"WARNING (prod): {prod}" in out["text"]
    assert f"> **prod**: {refuse}" in out["markdown"]
    assert "label obs-allow-deletes" in out["markdown"]

    for name, text in originals.items():
        (repo / name).write_text(text)
    (repo / "monitors" / "retention_forecast.yaml").unlink()  # one monitor less is within every limit
    assert warnings(outputs(run, repo)["json"], "mass-delete") == []


def test_a_move_to_another_datadog_site_says_the_old_monitors_keep_paging(repo: Path, run: Run) -> None:
    edit(repo, "environments/prod.yaml", "datadog: {site: datadoghq.com}", "datadog: {site: us5.datadoghq.com}")
    out = outputs(run, repo)
    (moved,) = warnings(out["json"], "site-move")
    assert moved["env"] == "prod"
    assert (
        "prod moves from Datadog site datadoghq.com to us5.datadoghq.com. The 120 monitors obs made on "
        in moved["text"]
    )
    assert "keep evaluating and paging until someone deletes them" in moved["text"]
    assert "keep evaluating and paging" in out["text"] and "keep evaluating and paging" in out["markdown"]


def test_a_renamed_queue_is_named_with_the_aws_queues_its_monitors_watch(repo: Path, run: Run) -> None:
    edit(repo, "queues.yaml", "  - name: low\n", "  - name: bulk\n")
    edit(repo, "environments/prod.yaml", "queues: [low, default]", "queues: [bulk, default]")
    out = outputs(run, repo)
    renamed = warnings(out["json"], "queue-rename")
    assert [w["env"] for w in renamed] == ["prod", "staging", "dev"]
    assert (
        "queue low is renamed bulk: its monitors are deleted and created again, now watching the AWS queue "
        "prod-bulk instead of prod-low. Their history, mutes and downtimes are lost" in renamed[0]["text"]
    )
    assert "now watching the AWS queue dev-bulk instead of dev-low" in out["text"]
    assert "now watching the AWS queue staging-bulk instead of staging-low" in out["markdown"]


def test_a_new_queue_is_not_a_rename(repo: Path, run: Run) -> None:
    path = repo / "queues.yaml"
    path.write_text(path.read_text() + generated_queues(1))
    assert warnings(outputs(run, repo)["json"], "queue-rename") == []


def test_paging_monitors_whose_condition_changed_read_as_a_person_reads_them(repo: Path, run: Run) -> None:
    edit(repo, "monitors/age.yaml", "thresholds: {critical: 14400, warning: 7200}", "thresholds: {critical: 7200}")
    edit(repo, "environments/staging.yaml", "monitors:\n", "monitors:\n  evaluation_delay: 300\n")
    out = outputs(run, repo)
    conditions = json.loads(out["json"])["paging_conditions"]
    prod = next(c for c in conditions if c["env"] == "prod")
    assert (prod["before"], prod["after"], prod["monitors"]) == (
        "pages after 4 h of waiting",
        "after 2 h of waiting",
        ["prod/introduction/age"],
    )
    assert prod["targets"] == ["@pagerduty-jobs-platform"]
    assert (
        "prod: 1 monitor paging @pagerduty-jobs-platform: pages after 4 h of waiting -> after 2 h of waiting"
        in (out["text"])
    )
    assert "pages after 4 h of waiting → after 2 h of waiting" in out["markdown"]
    staging = [c for c in conditions if c["env"] == "staging" and c["before"] == "evaluation delay 15 min"]
    assert staging and staging[0]["after"] == "5 min"
    assert "| `staging` | alert condition |" in out["markdown"], "the summary counts them per environment"


def test_monitors_that_now_alert_nobody_are_warned(repo: Path, run: Run) -> None:
    edit(repo, "environments/prod.yaml", 'page: ["@pagerduty-jobs-platform"]', "page: []")
    out = outputs(run, repo)
    (silent,) = warnings(out["json"], "alerts-nobody")
    assert silent["env"] == "prod"
    # The short queues' age goes to chat in prod (their SLO's fast burn pages instead).
    assert silent["text"].startswith(
        "49 monitors of prod that paged someone now alert nobody (prod/critical/consumers_stuck, "
    )
    assert "page: [] notifies no one" in out["text"] and "now alert nobody" in out["markdown"]
    assert "| `prod` | alert | removed `@pagerduty-jobs-platform` (49 → 0) |" in out["markdown"]


def own_code_repo(repo: Path, settings_edit: tuple[str, str] | None) -> None:
    """The example with obs itself in one repository; the base commit carries `settings_edit` to obs's code."""
    shutil.copytree(ROOT / "sync", repo / "sync", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", repo / "pyproject.toml")
    if settings_edit:
        edit(repo, "sync/expand/settings.py", *settings_edit)
    commit(repo, "obs and its definitions")
    shutil.rmtree(repo / "sync")
    shutil.copytree(ROOT / "sync", repo / "sync", ignore=shutil.ignore_patterns("__pycache__"))


def test_a_changed_default_in_obs_itself_shows_because_the_base_renders_with_its_own_code(repo: Path, run: Run) -> None:
    own_code_repo(repo, ('"crawler": 900,', '"crawler": 600,'))
    out = outputs(run, repo)
    assert "sync/expand/settings.py" in warnings(out["json"], "obs-code")[0]["text"]
    assert "the base was rendered by its own code" in out["text"]
    assert "`options.evaluation_delay` `600` → `900` on " in out["markdown"]
    assert "No monitor or dashboard changes" not in out["markdown"]
    assert "pages evaluation delay" not in out["text"]
    assert "evaluation delay 10 min -> 15 min" in out["text"], "paging monitors wait longer: said as such"
    assert list((repo.parent / ".cache" / "obs").glob("render-*")), "the base's render is cached by its tree"
    assert outputs(run, repo) == out, "the cached render reads the same"


def test_when_the_base_code_cannot_render_the_preview_says_it_cannot_show_the_code_change(repo: Path, run: Run) -> None:
    own_code_repo(
        repo, ("from __future__ import annotations", "raise SystemExit(3)\nfrom __future__ import annotations")
    )
    edit(repo, "sync/expand/settings.py", '"crawler": 900,', '"crawler": 900,  # unchanged value')
    out = outputs(run, repo)
    for fmt in FORMATS:
        assert "this preview CANNOT show what the code change does" in out[fmt], fmt
    assert "No monitor or dashboard changes" in out["markdown"]


def test_a_definitions_only_repository_never_renders_the_base_twice(repo: Path, run: Run) -> None:
    edit(repo, "monitors/age.yaml", "priority: 2", "priority: 3")
    out = outputs(run, repo)
    assert warnings(out["json"], "obs-code") == []
    assert not (repo.parent / ".cache").exists()


@pytest.fixture
def fleet(repo: Path) -> Path:
    path = repo / "queues.yaml"
    path.write_text(path.read_text() + generated_queues(100))
    commit(repo, "a hundred queues")
    return repo


def test_a_threshold_change_on_a_hundred_queues_is_one_line_and_fits_a_comment(fleet: Path, run: Run) -> None:
    edit(
        fleet,
        "monitors/depth.yaml",
        "thresholds: {critical: 10000, warning: 5000}",
        "thresholds: {critical: 20000, warning: 5000}",
    )
    code, out, err = run(fleet, "--base", "HEAD", "--base-label", "main", "--format", "markdown")
    assert (code, err) == (0, "")
    assert size(out) < LIMIT
    head = git(fleet, "rev-parse", "HEAD").strip()[:12]
    assert out.splitlines()[1] == f"## obs diff: `main` (`{head}`) → working tree (on `{head}`)"
    assert "- `options.thresholds.critical` `10000` → `20000` on 309 monitors (prod, staging, dev)\n" in out
    assert "> Left out to fit a pull-request comment: " in out  # big enough that detail had to go
    summary = out.split("### Who gets paged, in short")[1].split("###")[0]
    assert "| `prod` | alert condition | 103 paging monitors page at another point |" in summary
    assert out.index("### `prod`") < out.index("### `staging`") < out.index("### `dev`")
