"""`obs backtest` end to end: series written to moto's CloudWatch with PutMetricData, read back by the command
and replayed with the model. The history holds two planted incidents of the introduction queue; it pages at
those two and nowhere else."""

from __future__ import annotations

import json
import re
import shutil
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from sync.cli.app import main

from ..conftest import ROOT, commit, git
from .conftest import HOURS, INCIDENTS, START

DEFS = ROOT / "tests" / "fixtures" / "backtest"


def _iso(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%MZ")


def _backtest(
    capsys: pytest.CaptureFixture[str], *extra: str, fmt: str = "json", defs: Path = DEFS
) -> tuple[int, str, str]:
    argv = [
        "--definitions",
        str(defs),
        "backtest",
        "--env",
        "prod",
        "--queue",
        "introduction",
        "--from",
        _iso(START),
        "--to",
        _iso(START + timedelta(hours=HOURS)),
        "--format",
        fmt,
        *extra,
    ]
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def test_pages_at_the_planted_incidents_and_nowhere_else(
    history: None, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    code, out, _ = _backtest(capsys, "--cache", str(tmp_path / "cache"))
    assert code == 0
    found = json.loads(out)
    assert found["env"] == "prod"
    assert found["period"] == {
        "from": START.strftime("%Y-%m-%dT%H:%M:%SZ"),
        "to": (START + timedelta(hours=HOURS)).strftime("%Y-%m-%dT%H:%M:%SZ"),
    }
    pages = [
        (monitor["key"], datetime.fromisoformat(n["at"].replace("Z", "+00:00")))
        for monitor in found["monitors"]
        for n in monitor["notifications"]
        if n["paged"]
    ]
    assert [key for key, _ in pages] == ["prod/introduction/age", "prod/introduction/age"]
    for (_, at), began in zip(sorted(pages, key=lambda p: p[1]), INCIDENTS, strict=True):
        # The 10-minute average passes the threshold within the window, then the points arrive late (U6).
        assert began < at <= began + timedelta(minutes=10 + 17 + 2)
    age = next(m for m in found["monitors"] if m["key"] == "prod/introduction/age")
    # The average passes the warning on the way up and down: chat hears both, the pager the alert.
    assert [n["type"] for n in age["notifications"]] == ["warning", "alert", "warning", "recovery"] * 2
    assert [age["notifications"][i]["to"] for i in (0, 1)] == [["@slack-jobs-alerts"], ["@pagerduty-jobs-platform"]]
    assert age["alerts"] == 2 and age["pages_over_arrival_range"] == [2, 2]
    assert len(found["incidents"]) == 2
    why = dict((n["key"], n["why"]) for n in found["not_backtested"])
    assert why["prod/introduction/no_running_tasks"] == "no data for the period: aws.ecs.service.running"
    assert why["prod/introduction/scale_from_zero_failed"].startswith("it combines prod/introduction/no_running_tasks")


def test_the_text_and_markdown_reports_count_pages_and_incidents(
    history: None, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    cache = str(tmp_path / "cache")
    code, out, _ = _backtest(capsys, "--cache", cache, fmt="markdown")
    assert code == 0
    assert "| `prod/introduction/age` | 2 | 2 | 8 |" in out
    code, out, err = _backtest(capsys, "--cache", cache, fmt="text")
    assert "0 points in 0 calls" in err  # the finished day came from the cache
    assert code == 0
    assert "page (@pagerduty-jobs-platform): 2 pages in 2 incidents" in out
    assert "prod/introduction/age: 2 alerts, 2 pages" in out
    assert "not backtested (2):" in out


def test_a_period_beyond_what_cloudwatch_keeps_is_refused(aws: str, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["--definitions", str(DEFS), "backtest", "--env", "prod", "--days", "20", "--no-cache"])
    err = capsys.readouterr().err
    assert code == 1
    assert "15 days" in err and "Traceback" not in err


def test_no_credentials_is_a_clear_error(
    aws: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("AWS_ACCESS_KEY_ID")
    monkeypatch.delenv("AWS_SECRET_ACCESS_KEY")
    code = main(["--definitions", str(DEFS), "backtest", "--env", "prod", "--days", "1", "--no-cache"])
    err = capsys.readouterr().err
    assert code == 1
    assert "no usable AWS credentials" in err and "Traceback" not in err


def test_a_region_without_data_is_a_clear_error(aws: str, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["--definitions", str(DEFS), "backtest", "--env", "prod", "--days", "1", "--no-cache"])
    err = capsys.readouterr().err
    assert code == 1
    assert "CloudWatch has no data for any monitor of prod in us-east-1" in err


def test_raising_a_threshold_shows_the_pages_that_disappear(
    history: None, capsys: pytest.CaptureFixture[str], tmp_path: Path, plain_git: None
) -> None:
    repo = _raised_in_working_tree(tmp_path)
    cache = str(tmp_path / "cache")  # the second run reads the finished day from it
    code, out, _ = _backtest(capsys, "--base", "HEAD", "--cache", cache, fmt="text", defs=repo)
    assert code == 0
    at = [f"introduction {began.strftime('%Y-%m-%d %H:%MZ')}" for began in INCIDENTS]
    assert f"prod: 2 pages in {HOURS / 24:g} days at HEAD -> 0; these 2 incidents would no longer page: " in out
    assert all(hint[:-3] in out for hint in at)  # each incident named, by its queue and hour
    code, out, err = _backtest(capsys, "--base", "HEAD", "--cache", cache, defs=repo)
    assert "0 points in 0 calls" in err
    base = json.loads(out)["base"]
    assert (base["ref"], base["pages"], len(base["no_longer_paged"]), base["newly_paged"]) == ("HEAD", 2, 2, [])


def test_a_base_that_edits_obs_is_replayed_as_its_own_code_renders_it(
    history: None, capsys: pytest.CaptureFixture[str], tmp_path: Path, plain_git: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The base commit holds obs whose render raises the introduction age threshold past every incident; the
    # working tree holds this obs. Rendered by this obs, both sides would page alike: the base's own code
    # must render the base, and its monitors never page.
    monkeypatch.setenv("OBS_CACHE_DIR", str(tmp_path / "cache"))
    repo = tmp_path / "repo"
    shutil.copytree(DEFS, repo)
    shutil.copytree(ROOT / "sync", repo / "sync", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", repo / "pyproject.toml")
    render = repo / "sync" / "cli" / "render.py"
    written = "body_bytes(r.body)"
    assert written in render.read_text()
    raised = 'body_bytes(r.body).replace(b"14400", b"999999")'
    render.write_text(render.read_text().replace(written, raised))
    git(repo, "init", "-q")
    commit(repo, "base: obs that renders a higher age threshold")
    shutil.rmtree(repo / "sync")
    shutil.copytree(ROOT / "sync", repo / "sync", ignore=shutil.ignore_patterns("__pycache__"))
    code, out, err = _backtest(capsys, "--base", "HEAD", "--no-cache", defs=repo)
    assert code == 0, err
    base = json.loads(out)["base"]
    assert (base["pages"], base["no_longer_paged"], len(base["newly_paged"])) == (0, [], 2)


def _raised_in_working_tree(tmp_path: Path) -> Path:
    """The fixture as the one commit of a repository, and a working tree that raises introduction's age page
    past both planted incidents."""
    repo = tmp_path / "repo"
    shutil.copytree(DEFS, repo)
    git(repo, "init", "-q")
    commit(repo, "base")
    prod = repo / "environments" / "prod.yaml"
    raised = "queues:\n  introduction:\n    metrics:\n      age: {thresholds: {critical: 30000, warning: 25000}}\n"
    prod.write_text(prod.read_text(encoding="utf-8") + raised, encoding="utf-8")
    return repo


@pytest.mark.heavy(15)
def test_diff_backtest_says_which_incidents_the_change_would_no_longer_page(
    history: None, capsys: pytest.CaptureFixture[str], tmp_path: Path, plain_git: None
) -> None:
    repo = _raised_in_working_tree(tmp_path)
    argv = ["--definitions", str(repo), "diff", "--base", "HEAD", "--base-label", "main", "--backtest", "prod"]
    assert main([*argv, "--backtest-days", "3", "--format", "markdown"]) == 0
    comment = capsys.readouterr().out
    assert "### Backtest: would this change have paged?" in comment
    assert "- prod: 2 pages in 3 days at main -> 0; these 2 incidents would no longer page: " in comment
    named = re.findall(r"introduction (\S+ \S+Z)", comment.split("### Backtest", 1)[1].split("\n\n", 2)[1])
    paged = [datetime.strptime(t, "%Y-%m-%d %H:%MZ").replace(tzinfo=UTC) for t in named]
    assert len(paged) == len(INCIDENTS)
    assert all(timedelta(0) <= at - began < timedelta(minutes=40) for at, began in zip(paged, INCIDENTS, strict=True))
    # Below the backtest, the preview is the one `obs diff` writes without it.
    assert "prod-introduction,region:us-east-1} > 30000" in comment.split("### Backtest", 1)[1]
    # The days fetched are kept: the JSON of a second run reads only the day still open.
    assert main([*argv, "--backtest-days", "3", "--format", "json"]) == 0
    (found,) = json.loads(capsys.readouterr().out)["backtest"]
    assert (found["env"], found["source"], found["pages"]) == ("prod", "CloudWatch", {"base": 2, "head": 0})
    assert (len(found["no_longer_paged"]), found["newly_paged"]) == (2, [])


def test_diff_backtest_that_cannot_read_says_so_and_the_preview_stands(
    aws: str, capsys: pytest.CaptureFixture[str], tmp_path: Path, plain_git: None
) -> None:
    repo = _raised_in_working_tree(tmp_path)
    argv = ["--definitions", str(repo), "diff", "--base", "HEAD", "--backtest", "prod", "--backtest-days", "1"]
    assert main([*argv, "--format", "text"]) == 0
    out, err = capsys.readouterr()
    assert "backtest prod: not backtested: CloudWatch has no data for any monitor of prod" in out
    assert "obs diff --backtest prod: CloudWatch has no data" in err
    assert "introduction" in out  # the preview itself
