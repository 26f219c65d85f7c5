"""`obs init`: a new definitions folder that validates, passes `obs test` and plans offline as written, names
only the environments it was given, repeats nothing of the catalogue, and never writes into a folder in use."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
import yaml

from sync.cli.app import main
from tests.conftest import ROOT, Run, commit, git


def obs(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def undeclared_notes(err: str) -> list[str]:
    """The environments validate says leave the backlog estimate out; any other line on stderr fails the test."""
    envs = []
    for line in err.splitlines():
        match = re.fullmatch(
            r"note: environments/(\w+)\.yaml:\d+: aws: backlog_draining, backlog_minutes make no monitors in \1: "
            r"they rest on aws\.sqs_counters, not declared: .*",
            line,
        )
        assert match, line
        envs.append(match.group(1))
    return envs


def test_a_new_folder_validates_tests_and_plans(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "my-defs"
    code, out, err = obs(capsys, "init", str(folder), "--env", "staging", "--env", "prod", "--site", "datadoghq.eu")
    assert (code, err) == (0, "")
    assert out.startswith(f"wrote 11 files to {folder}")
    code, out, err = obs(capsys, "--definitions", str(folder), "validate")
    assert code == 0 and out.startswith("ok: 3 queues, ")
    assert undeclared_notes(err) == ["prod", "staging"]  # until the team has checked its SQS counters
    code, out, err = obs(capsys, "--definitions", str(folder), "test")
    assert code == 0, out + err
    assert "scenario runs passed" in out and "FAIL" not in out
    code, out, err = obs(capsys, "--definitions", str(folder), "plan", "--env", "prod", "--offline")
    assert (code, err) == (0, "")
    assert "Plan: " in out and " to create, 0 to update, 0 to delete" in out
    assert yaml.safe_load((folder / "environments" / "prod.yaml").read_text())["datadog"] == {"site": "datadoghq.eu"}


def test_nothing_repeats_the_catalogue_and_the_workflows_name_only_its_environments(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "defs"
    assert obs(capsys, "init", str(folder), "--env", "qa", "--env", "live", "--region", "eu-west-1")[0] == 0
    written = sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file())
    assert written == [
        ".github/workflows/obs-drift.yml",
        ".github/workflows/obs.yml",
        ".gitignore",
        "catalogue.yaml",
        "environments/live.yaml",
        "environments/qa.yaml",
        "queues.yaml",
        "requirements.txt",
        "scenarios/feature-idle-stays-quiet.yaml",
        "scenarios/long-steady-stays-quiet.yaml",
        "scenarios/short-consumers-stall.yaml",
    ]
    for workflow in (folder / ".github" / "workflows").iterdir():
        flow = yaml.safe_load(workflow.read_text())
        for job in flow["jobs"].values():
            if "strategy" in job:
                assert job["strategy"]["matrix"]["env"] == ["qa", "live"]
        for name in ("dev", "staging", "prod"):
            assert name not in workflow.read_text().replace("production", ""), (workflow.name, name)
    assert yaml.safe_load((folder / "environments" / "qa.yaml").read_text())["aws"]["region"] == "eu-west-1"
    assert yaml.safe_load((folder / "catalogue.yaml").read_text()) == {"use": "standard"}


def test_a_folder_in_use_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "notes.txt").write_text("mine")
    code, out, err = obs(capsys, "init", str(tmp_path))
    assert (code, out) == (1, "")
    assert (
        err
        == f"error: {tmp_path} is not empty: name a new or empty folder: obs init never overwrites or mixes in files\n"
    )
    assert [p.name for p in tmp_path.iterdir()] == ["notes.txt"]


@pytest.mark.parametrize(
    ("flag", "value", "said"),
    [
        (
            "--site",
            "app.datadoghq.eu",
            "error: --site 'app.datadoghq.eu' is not a Datadog site: did you mean datadoghq.eu?",
        ),
        (
            "--region",
            "eu-wset-1",
            "error: --region 'eu-wset-1' is not an AWS region botocore knows: did you mean eu-west-1?",
        ),
        ("--env", "Prod", "error: --env 'Prod' is not an environment name"),
    ],
)
def test_a_wrong_site_region_or_name_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], flag: str, value: str, said: str
) -> None:
    code, out, err = obs(capsys, "init", str(tmp_path / "defs"), flag, value)
    assert (code, out) == (1, "")
    assert err.startswith(said), err
    assert not (tmp_path / "defs").exists()


def test_a_catalogue_change_shows_in_the_diff_of_definitions_that_use_it(
    tmp_path: Path, plain_git: None, run: Run, capsys: pytest.CaptureFixture[str]
) -> None:
    """In a repository that holds obs, the catalogue's files are obs's code: the base is rendered with its own
    catalogue, so a changed threshold shows although the definitions themselves did not change."""
    repo = tmp_path / "repo"
    repo.mkdir()
    shutil.copytree(ROOT / "sync", repo / "sync", symlinks=True, ignore=shutil.ignore_patterns("__pycache__"))
    for part in ("monitors", "dashboards"):
        shutil.copytree(ROOT / part, repo / part)
    shutil.copy(ROOT / "pyproject.toml", repo / "pyproject.toml")
    assert obs(capsys, "init", str(repo / "defs"), "--env", "prod")[0] == 0
    depth = repo / "monitors" / "depth.yaml"
    shipped = depth.read_text()
    critical = yaml.safe_load(shipped)["thresholds"]["critical"]
    depth.write_text(shipped.replace(f"critical: {critical},", f"critical: {critical + 1},", 1))
    git(repo, "init", "-q")
    commit(repo, "base: obs with an older catalogue")
    depth.write_text(shipped)  # the head: the catalogue of the obs running this test
    code, out, err = run(repo / "defs", "--base", "HEAD", "--env", "prod")
    assert (code, err) == (0, ""), err
    assert "the base was rendered by its own code" in out and "monitors/depth.yaml" in out
    assert f"{critical + 1:,} -> {critical:,}" in out or f"{critical + 1} -> {critical}" in out, out


def test_the_namespace_comes_from_the_folder_or_the_option(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert obs(capsys, "init", str(tmp_path / "Payments Jobs"))[0] == 0
    assert yaml.safe_load((tmp_path / "Payments Jobs" / "queues.yaml").read_text())["namespace"] == "payments-jobs"
    assert obs(capsys, "init", str(tmp_path / "b"), "--namespace", "search")[0] == 0
    assert yaml.safe_load((tmp_path / "b" / "queues.yaml").read_text())["namespace"] == "search"
    code, out, err = obs(capsys, "init", str(tmp_path / "c"), "--namespace", "Search")
    assert (code, out) == (1, "") and "--namespace 'Search' is not a namespace" in err
    assert not (tmp_path / "c").exists()


FIRST_HOUR = ROOT / "tests" / "fixtures" / "first_hour"


def test_own_queues_and_classes_take_three_runs_each_listing_everything(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The first hour: replace the example queues with one's own (own class names, a topic, a feature queue).
    Each run reports every problem of its stage with what to do, and the scenarios need only their queue."""
    folder = tmp_path / "my-defs"
    assert obs(capsys, "init", str(folder), "--env", "staging", "--env", "prod", "--site", "datadoghq.eu")[0] == 0
    shutil.copy(FIRST_HOUR / "queues.yaml", folder / "queues.yaml")
    code, out, err = obs(capsys, "--definitions", str(folder), "validate")
    assert (code, out) == (1, "")
    lines = err.removeprefix("error: ").splitlines()
    assert [line.split(": ")[1] for line in lines[:3]] == ["classes.critical", "classes.standard", "classes.bulk"]
    assert "e.g. classes: {critical: short} (short: jobs of seconds" in lines[0]
    assert "feature: queues that idle at zero workers" in lines[2]
    assert lines[-1] == "3 problems in 1 file"

    shutil.copy(FIRST_HOUR / "catalogue.yaml", folder / "catalogue.yaml")
    code, out, err = obs(capsys, "--definitions", str(folder), "validate")
    assert (code, out) == (1, "")
    lines = err.removeprefix("error: ").splitlines()
    assert lines[-1] == "3 problems in 3 files"
    for line, name in zip(lines[:3], ("imports", "reports", "orders"), strict=True):
        assert f": queue: unknown queue '{name}': use one declared in queues.yaml: emails, payments, thumbnails" in line
        assert line.endswith(", or delete this scenario")

    for cls, queue in (("short", "payments"), ("long", "emails"), ("feature", "thumbnails")):
        [scenario] = (folder / "scenarios").glob(f"{cls}-*.yaml")
        text = scenario.read_text()
        scenario.write_text("\n".join(f"queue: {queue}" if t.startswith("queue: ") else t for t in text.split("\n")))
    code, out, err = obs(capsys, "--definitions", str(folder), "validate")
    assert code == 0 and out.startswith("ok: 3 queues, ")
    assert undeclared_notes(err) == ["prod", "staging"]  # until the team has checked its SQS counters
    code, out, err = obs(capsys, "--definitions", str(folder), "test")
    assert code == 0, out + err
    assert "6 of 6 scenario runs passed" in out
    code, out, err = obs(capsys, "--definitions", str(folder), "plan", "--env", "prod", "--offline")
    assert (code, err) == (0, "")
    for queue in ("payments", "emails", "thumbnails"):
        assert f"+ monitor prod/{queue}/" in out
    assert "/payment-events  [prod] payments: " in out  # a monitor of the topic
