"""The GitHub workflows keep the properties the README promises: pinned actions, bounded jobs, one sticky
comment, a comment only for finished previews, hashed dependencies where Datadog keys are, drift checks."""

from __future__ import annotations

import re
from typing import Any

import pytest
import yaml

from tests.conftest import ROOT

WORKFLOWS = ROOT / ".github" / "workflows"
PINNED = re.compile(r"^[\w.-]+/[\w.-]+(/[\w./-]+)?@[0-9a-f]{40}$")


def load(name: str) -> dict[str, Any]:
    data: dict[Any, Any] = yaml.safe_load((WORKFLOWS / name).read_text())
    if True in data:  # YAML 1.1 reads the key `on` as true
        data["on"] = data.pop(True)
    return data


def every() -> list[str]:
    return sorted(p.name for p in WORKFLOWS.glob("*.yml"))


def steps(workflow: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    return [(name, step) for name, job in workflow["jobs"].items() for step in job.get("steps", [])]


def test_there_are_the_three_workflows() -> None:
    assert every() == ["obs-comment.yml", "obs-drift.yml", "obs.yml"]


@pytest.mark.parametrize("name", every())
def test_every_action_is_pinned_by_commit(name: str) -> None:
    used = [step["uses"] for _, step in steps(load(name)) if "uses" in step]
    assert used, "each workflow uses an action"
    assert [u for u in used if not PINNED.match(u)] == []


@pytest.mark.parametrize("name", every())
def test_every_job_has_a_timeout_and_no_default_write_token(name: str) -> None:
    workflow = load(name)
    assert "permissions" in workflow
    for job_name, job in workflow["jobs"].items():
        assert 0 < job["timeout-minutes"] <= 60, job_name
        assert "permissions" in job, job_name


@pytest.mark.parametrize("name", every())
def test_jobs_holding_datadog_keys_install_only_hashed_dependencies(name: str) -> None:
    for job_name, job in load(name)["jobs"].items():
        if "secrets.DD_APP_KEY" not in yaml.safe_dump(job):
            continue
        installs = [s["run"] for s in job["steps"] if "pip install" in s.get("run", "")]
        assert installs, job_name
        for command in installs:
            assert "pip install --require-hashes -r requirements.lock && pip install --no-deps ." in command, job_name


def test_the_lock_file_pins_every_dependency_with_hashes() -> None:
    lines = (ROOT / "requirements.lock").read_text().splitlines()
    pins = [line for line in lines if re.match(r"^[A-Za-z0-9_.-]+==", line)]
    assert {p.split("==")[0].lower() for p in pins} >= {"datadog-api-client", "boto3", "pyyaml", "jsonschema"}
    text = "\n".join(lines)
    for pin in pins:
        block = text.split(pin, 1)[1].split("\n\n", 1)[0]
        assert "--hash=sha256:" in block.split("==", 1)[0] or "--hash=sha256:" in block, pin


def test_previews_run_only_for_definition_or_code_changes_one_at_a_time() -> None:
    workflow = load("obs.yml")
    for event in ("pull_request", "push"):
        paths = workflow["on"][event]["paths"]
        assert {"queues.yaml", "environments/**", "monitors/**", "dashboards/**", "sync/**"} <= set(paths)
    preview = workflow["jobs"]["preview"]
    assert preview["concurrency"]["cancel-in-progress"] is True
    assert "contents" in preview["permissions"] and set(preview["permissions"].values()) == {"read"}


def test_syncs_run_one_per_environment_and_never_cancel_midway() -> None:
    jobs = load("obs.yml")["jobs"]
    for name in ("sync", "sync-prod"):
        assert jobs[name]["concurrency"]["cancel-in-progress"] is False
    assert jobs["sync-prod"]["environment"] == "prod"
    assert jobs["sync-prod"]["needs"] == "plan-prod"


def test_prod_applies_exactly_the_plan_its_approvers_saw() -> None:
    jobs = load("obs.yml")["jobs"]
    planned = " ".join(s.get("run", "") for s in jobs["plan-prod"]["steps"])
    applied = " ".join(s.get("run", "") for s in jobs["sync-prod"]["steps"])
    assert "obs plan --env prod --out prod.plan.json" in planned
    assert "GITHUB_STEP_SUMMARY" in planned
    assert "obs sync --env prod --plan prod.plan.json --yes" in applied


def test_the_deletion_escape_hatch_is_reviewed_and_applies_to_one_sync() -> None:
    workflow = load("obs.yml")
    assert workflow["on"]["workflow_dispatch"]["inputs"]["max_deletes"]["default"] == ""
    script = (ROOT / ".github" / "obs-allowed-deletes.sh").read_text()
    assert "obs-allow-deletes" in script and "commits/$GITHUB_SHA/pulls" in script
    assert 'obs diff --base HEAD^ --head HEAD --env "$OBS_ENV"' in script, "only this merge's own deletions"
    for name in ("sync", "sync-prod"):
        runs = " ".join(s.get("run", "") for s in workflow["jobs"][name]["steps"])
        assert '${ALLOW:+--max-deletes "$ALLOW"}' in runs


def test_the_comment_skips_cancelled_runs_and_posts_one_sticky_comment() -> None:
    workflow = load("obs-comment.yml")
    job = workflow["jobs"]["comment"]
    assert "conclusion == 'success'" in job["if"] and "cancelled" not in job["if"]
    assert job["concurrency"]["cancel-in-progress"] is False
    assert "head_branch" in job["concurrency"]["group"]
    download = next(s for s in job["steps"] if "download-artifact" in s.get("uses", ""))
    assert download["if"] == "github.event.workflow_run.conclusion == 'success'", "a failed run's text is not posted"
    assert not any("checkout" in s.get("uses", "") for s in job["steps"]), "never runs the pull request's code"


def test_drift_is_checked_every_day_in_every_environment() -> None:
    workflow = load("obs-drift.yml")
    assert workflow["on"]["schedule"]
    job = workflow["jobs"]["drift"]
    assert job["strategy"]["matrix"]["env"] == ["dev", "staging", "prod"]
    runs = " ".join(s.get("run", "") for s in job["steps"])
    assert "obs plan --env" in runs and "--detailed-exitcode" in runs
    assert "GITHUB_STEP_SUMMARY" in runs and "gh issue edit" in runs and "gh issue close" in runs
