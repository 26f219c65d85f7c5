"""The GitHub workflows keep the properties the README promises: pinned actions, bounded jobs, one sticky
comment, a comment only for finished previews, hashed dependencies where Datadog keys are, drift checks."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path
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
    assert job["needs"] == "environments"
    assert job["strategy"]["matrix"]["env"] == "${{ fromJSON(needs.environments.outputs.all) }}"
    runs = " ".join(s.get("run", "") for s in job["steps"])
    assert "obs plan --env" in runs and "--detailed-exitcode" in runs
    assert "GITHUB_STEP_SUMMARY" in runs and "gh issue edit" in runs and "gh issue close" in runs


# Where a workflow can name an environment: a matrix or choice list, a comparison with one, `--env NAME`,
# `OBS_ENV: NAME`, a GitHub environment (`prod`, or its read-only `prod-plan`).
NAMED = (
    re.compile(r"(?:matrix\.env|inputs\.env)\s*[!=]=\s*'([\w-]+)'"),
    re.compile(r"--env[ =]([\w-]+)"),
)


def named_environments(workflow: dict[str, Any]) -> set[str]:
    names: set[str] = set()
    dispatch = (workflow["on"] or {}).get("workflow_dispatch") or {}
    for given in (dispatch.get("inputs") or {}).values():
        names.update(given.get("options", ()))
    for job in workflow["jobs"].values():
        env = ((job.get("strategy") or {}).get("matrix") or {}).get("env")
        if isinstance(env, list):
            names.update(env)
        for value in (job.get("environment"), *(s.get("env", {}).get("OBS_ENV") for s in job.get("steps", []))):
            if isinstance(value, str) and "${{" not in value:
                names.add(value.removesuffix("-plan"))
    text = yaml.safe_dump(workflow, width=10_000)
    for pattern in NAMED:
        names.update(pattern.findall(text))
    return names


@pytest.mark.parametrize("name", every())
def test_every_environment_a_workflow_names_is_defined(name: str) -> None:
    defined = {p.stem for p in (ROOT / "environments").iterdir() if p.suffix in (".yaml", ".yml")}
    named = named_environments(load(name))
    assert named <= defined
    # Only prod, whose approvers approve a computed plan, has jobs of its own (skipped where there is no prod);
    # every other environment comes from environments/, so a user's own set needs no edit here.
    assert named <= {"prod"}


def test_the_environment_names_are_found_where_a_workflow_would_hard_code_them() -> None:
    workflow: dict[str, Any] = {
        "on": {"workflow_dispatch": {"inputs": {"env": {"options": ["qa"]}}}},
        "jobs": {
            "a": {"strategy": {"matrix": {"env": ["dev"]}}, "environment": "uat-plan", "if": "matrix.env == 'perf'"},
            "b": {"steps": [{"run": "obs plan --env sandbox", "env": {"OBS_ENV": "demo"}}]},
        },
    }
    assert named_environments(workflow) == {"qa", "dev", "uat", "perf", "sandbox", "demo"}


def environments_of(tmp_path: Path, files: list[str], only: str = "") -> tuple[int, dict[str, Any], str]:
    """Runs .github/obs-environments.sh on an environments/ folder of these files: its exit code, its outputs
    (JSON-decoded) and what it said on stderr."""
    folder = tmp_path / "environments"
    folder.mkdir(exist_ok=True)
    for file in files:
        (folder / file).write_text("")
    output = tmp_path / "output"
    output.write_text("")
    done = subprocess.run(
        ["bash", str(ROOT / ".github" / "obs-environments.sh")],
        cwd=tmp_path,
        env={"PATH": os.environ["PATH"], "GITHUB_OUTPUT": str(output), "ONLY": only},
        capture_output=True,
        text=True,
        check=False,
    )
    found = dict(line.split("=", 1) for line in output.read_text().splitlines())
    return done.returncode, {k: json.loads(v) for k, v in found.items()}, done.stderr


def test_the_workflows_run_for_the_environments_the_definitions_declare(tmp_path: Path) -> None:
    code, found, _ = environments_of(tmp_path, ["staging.yaml", "prod.yml", "README.md"])
    assert code == 0
    assert found == {"all": ["prod", "staging"], "direct": ["staging"], "prod": True}
    code, found, _ = environments_of(tmp_path, [], only="prod")
    assert code == 0
    assert found == {"all": ["prod"], "direct": [], "prod": True}
    code, found, said = environments_of(tmp_path, [], only="dev")
    assert code == 1 and found == {}
    assert "unknown environment 'dev': use one of: prod, staging" in said


def test_every_job_runs_for_the_environments_job_s_list() -> None:
    obs = load("obs.yml")["jobs"]
    assert obs["sync"]["strategy"]["matrix"]["env"] == "${{ fromJSON(needs.environments.outputs.direct) }}"
    assert obs["audit"]["strategy"]["matrix"]["env"] == "${{ fromJSON(needs.environments.outputs.all) }}"
    assert "needs.environments.outputs.prod == 'true'" in obs["plan-prod"]["if"]
    for workflow in ("obs.yml", "obs-drift.yml"):
        (step,) = [s for s in load(workflow)["jobs"]["environments"]["steps"] if "run" in s]
        assert step["run"] == ".github/obs-environments.sh"


def test_no_expression_is_expanded_inside_a_shell_script() -> None:
    for name in every():
        for job_name, step in steps(load(name)):
            assert "${{" not in step.get("run", ""), f"{name} {job_name}: pass event data through env:"


# A stand-in for the GitHub CLI: `gh api` answers from a JSON file of pull requests, files, comments and
# issues (filtered with the real jq, as gh --jq does); writes and other commands are recorded.
FAKE_GH = r"""#!/usr/bin/env python3
import json, os, re, subprocess, sys
state = json.load(open(os.environ["FAKE_GH_STATE"]))
if sys.argv[1] != "api":
    with open(os.environ["FAKE_GH_POSTED"], "a") as log:
        log.write(json.dumps({"argv": sys.argv[1:]}) + "\n")
    sys.exit(0)
args = sys.argv[2:]
method, jq, fields, paths = "GET", None, {}, []
while args:
    arg = args.pop(0)
    if arg == "--method": method = args.pop(0)
    elif arg == "--jq": jq = args.pop(0)
    elif arg == "-F": name, _, value = args.pop(0).partition("="); fields[name] = open(value[1:]).read()
    elif arg != "--paginate": paths.append(arg)
path, _, query = paths[0].partition("?")
if method != "GET":
    with open(os.environ["FAKE_GH_POSTED"], "a") as log:
        log.write(json.dumps({"method": method, "path": path, "body": fields["body"]}) + "\n")
    sys.exit(0)
number = re.search(r"/(\d+)", path)
if path.endswith("/pulls"):
    answer = state["pulls"]
elif path.endswith("/issues"):
    wanted = dict(p.split("=", 1) for p in query.split("&")).get("labels")
    answer = [i for i in state["issues"] if wanted in [label["name"] for label in i["labels"]]]
elif path.endswith("/files"):
    answer = [{"filename": f} for f in state["files"][number.group(1)]]
elif path.endswith("/comments"):
    answer = state["comments"].get(number.group(1), [])
else:
    answer = next(p for p in state["pulls"] if str(p["number"]) == number.group(1))
text = json.dumps(answer)
if jq:
    text = subprocess.run(["jq", "-r", jq], input=text, capture_output=True, text=True, check=True).stdout
sys.stdout.write(text)
"""


def pull(number: int, sha: str, repo: str = "acme/jobs") -> dict[str, Any]:
    return {
        "number": number,
        "state": "open",
        "head": {"sha": sha, "repo": {"full_name": repo}},
        "base": {"repo": {"full_name": "acme/jobs"}},
    }


def run_step(tmp_path: Path, step: dict[str, Any], state: dict[str, Any], env: dict[str, str]) -> list[dict[str, Any]]:
    """Runs a step's script as Actions would (bash -eo pipefail) with the fake gh; what it wrote or ran."""
    assert set(env) <= set(step["env"]) | {"GH_TOKEN"}, "the script reads only what the step passes it"
    (tmp_path / "bin").mkdir(exist_ok=True)
    gh = tmp_path / "bin" / "gh"
    gh.write_text(FAKE_GH)
    gh.chmod(0o755)
    (tmp_path / "state.json").write_text(json.dumps(state))
    posted = tmp_path / "posted.jsonl"
    posted.unlink(missing_ok=True)
    environ = {
        "PATH": f"{tmp_path / 'bin'}:{os.environ['PATH']}",
        "FAKE_GH_STATE": str(tmp_path / "state.json"),
        "FAKE_GH_POSTED": str(posted),
        **env,
    }
    done = subprocess.run(
        ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", step["run"]],
        cwd=tmp_path,
        env=environ,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return [json.loads(line) for line in posted.read_text().splitlines()] if posted.exists() else []


def comment_job(
    tmp_path: Path, pulls: list[dict[str, Any]], files: list[str], *, run_pulls: str = "[]", text: str = "preview"
) -> list[dict[str, Any]]:
    """The comment job's script for a run of head `abc123` of acme/jobs; what it posted."""
    job = load("obs-comment.yml")["jobs"]["comment"]
    step = next(s for s in job["steps"] if "run" in s)
    state = {"pulls": pulls, "files": {str(p["number"]): files for p in pulls}, "comments": {}}
    (tmp_path / "comment.md").write_text(text)  # what the pull request's run uploaded
    environ = {
        "GH_TOKEN": "token",
        "REPO": "acme/jobs",
        "RUN_ID": "77",
        "RUN_URL": "https://github.com/acme/jobs/actions/runs/77",
        "RUN_PULLS": run_pulls,
        "HEAD_SHA": "abc123",
        "HEAD_REPO": pulls[0]["head"]["repo"]["full_name"] if pulls else "acme/jobs",
        "CONCLUSION": "success",
    }
    return run_step(tmp_path, step, state, environ)


def test_the_comment_says_it_was_rendered_by_the_pull_requests_own_code(tmp_path: Path) -> None:
    text = "<!-- obs-diff -->\n## obs diff\nPages @pagerduty-jobs and @acme/oncall.\n" + "x" * 70_000
    (posted,) = comment_job(tmp_path, [pull(5, "abc123")], ["environments/prod.yaml"], text=text)
    assert posted["method"] == "POST" and posted["path"] == "repos/acme/jobs/issues/5/comments"
    body = posted["body"]
    assert body.startswith(
        "<!-- obs-diff -->\n> Rendered from this pull request's own code and workflow by "
        "[run 77](https://github.com/acme/jobs/actions/runs/77), at abc123.\n\n## obs diff\n"
    )
    assert "Not verified" not in body and body.count("<!-- obs-diff -->") == 1
    assert "@\u200bpagerduty-jobs and @\u200bacme/oncall" in body, "no mention notifies anyone"
    assert 60_000 < len(body) < 61_000 and "(cut at 60,000 characters" in body


@pytest.mark.parametrize(
    ("head_repo", "files", "why"),
    [
        ("acme/jobs", ["environments/prod.yaml", "sync/expand/settings.py"], "changes obs or its workflow"),
        ("acme/jobs", [".github/workflows/obs.yml"], "changes obs or its workflow"),
        ("acme/jobs", ["requirements.lock"], "changes obs or its workflow"),
        ("mallory/jobs", ["monitors/age.yaml"], "comes from the fork mallory/jobs, so"),
    ],
)
def test_a_preview_the_pull_request_could_have_written_itself_is_marked_not_verified(
    tmp_path: Path, head_repo: str, files: list[str], why: str
) -> None:
    (posted,) = comment_job(tmp_path, [pull(9, "abc123", head_repo)], files)
    assert f"> **Not verified:** this pull request {why}" in posted["body"]
    assert posted["body"].index("Not verified") < posted["body"].index("preview")


def test_the_comment_goes_only_to_the_previewed_pull_request(tmp_path: Path) -> None:
    same_head = [pull(3, "abc123"), pull(4, "abc123")]  # one branch proposed to two base branches
    assert comment_job(tmp_path, same_head, ["environments/dev.yaml"]) == []
    pushed_since = [pull(3, "def456")]
    assert comment_job(tmp_path, pushed_since, ["environments/dev.yaml"], run_pulls='[{"number": 3}]') == []
    (posted,) = comment_job(tmp_path, [pull(3, "abc123")], ["queues.yaml"], run_pulls='[{"number": 3}]')
    assert posted["path"] == "repos/acme/jobs/issues/3/comments"


def issue(number: int, author: str, labels: list[str]) -> dict[str, Any]:
    return {
        "number": number,
        "title": "obs drift: prod",
        "user": {"login": author},
        "labels": [{"name": n} for n in labels],
    }


def drift_job(tmp_path: Path, issues: list[dict[str, Any]], drift: str) -> list[list[str]]:
    """The drift job's issue step for prod; the gh commands it ran."""
    job = load("obs-drift.yml")["jobs"]["drift"]
    step = next(s for s in job["steps"] if s.get("name") == "Keep the drift issue up to date")
    (tmp_path / "drift.md").write_text("- **update** monitor `prod/high/age`\n")
    env = {"GH_TOKEN": "t", "REPO": "acme/jobs", "OBS_ENV": "prod", "DRIFT": drift, "RUN_URL": "https://run"}
    return [entry["argv"] for entry in run_step(tmp_path, step, {"issues": issues}, env)]


def test_the_drift_issue_is_the_bots_own_found_by_its_label(tmp_path: Path) -> None:
    planted = [issue(1, "mallory", ["obs-drift-prod"]), issue(2, "github-actions[bot]", ["question"])]
    ran = drift_job(tmp_path, planted, "true")
    assert [argv[:2] for argv in ran] == [["label", "create"], ["issue", "create"]], (
        "someone else's issue is left alone"
    )
    assert ran[1][ran[1].index("--label") + 1] == "obs-drift-prod"
    ours = [*planted, issue(3, "github-actions[bot]", ["obs-drift-prod"])]
    assert drift_job(tmp_path, ours, "true") == [
        ["issue", "edit", "3", "--repo", "acme/jobs", "--body-file", "body.md"]
    ]
    (closed,) = drift_job(tmp_path, ours, "false")
    assert closed[:3] == ["issue", "close", "3"]
    assert drift_job(tmp_path, planted, "false") == []


@pytest.mark.parametrize("name", every())
def test_only_the_audit_job_can_mint_an_aws_token_and_it_holds_no_datadog_key(name: str) -> None:
    for job_name, job in load(name)["jobs"].items():
        runs = " ".join(s.get("run", "") for s in job.get("steps", []))
        if job.get("permissions", {}).get("id-token") != "write":
            assert "obs-aws-oidc.sh" not in runs, job_name
            continue
        assert "obs-aws-oidc.sh" in runs and "obs audit" in runs, job_name
        assert "secrets." not in yaml.safe_dump(job), f"{job_name}: the job that can reach AWS holds no secret"
        assert "obs sync" not in runs and "obs diff" not in runs and "obs plan" not in runs, job_name
        assert job["environment"], "the AWS role trusts the environment's token only"


@pytest.mark.parametrize(
    ("envs", "added"),
    [("", []), ("prod staging", ["--backtest", "prod", "--backtest", "staging", "--backtest-source", "datadog"])],
)
def test_the_preview_backtests_only_the_environments_the_repository_opts_in(
    tmp_path: Path, envs: str, added: list[str]
) -> None:
    step = next(s for s in load("obs.yml")["jobs"]["preview"]["steps"] if s.get("id") == "diff")
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    subprocess.run(
        [
            "git",
            "-C",
            str(tmp_path),
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@t",
            "commit",
            "-q",
            "--allow-empty",
            "-m",
            "x",
        ],
        check=True,
    )
    subprocess.run(["git", "-C", str(tmp_path), "update-ref", "refs/remotes/origin/main", "HEAD"], check=True)
    (tmp_path / "bin").mkdir()
    obs = tmp_path / "bin" / "obs"
    obs.write_text('#!/bin/sh\nprintf "%s\\n" "$@" > "$(dirname "$0")/../argv.txt"\necho preview\n')
    obs.chmod(0o755)
    env = {"BASE_REF": "main", "BACKTEST_ENVS": envs, "GITHUB_OUTPUT": "out.txt", "GITHUB_STEP_SUMMARY": "sum.txt"}
    assert {"BASE_REF", "BACKTEST_ENVS"} <= set(step["env"]), "the step passes what the script reads"
    path = f"{tmp_path / 'bin'}:{os.environ['PATH']}"
    script = ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", step["run"]]
    done = subprocess.run(script, cwd=tmp_path, env={"PATH": path, **env}, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    argv = (tmp_path / "argv.txt").read_text().split("\n")[:-1]
    head = ["git", "-C", str(tmp_path), "rev-parse", "HEAD"]
    base = subprocess.run(head, check=True, capture_output=True, text=True).stdout
    assert argv == ["diff", "--base", base.strip(), "--base-label", "main", *added, "--format", "markdown"]
    assert (tmp_path / "comment.md").read_text() == "preview\n"
