"""`obs diff`: the real CLI against temporary git repositories; golden reports for each kind of change."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

import pytest

from sync.preview import revision
from sync.preview.comment import BUDGET, LIMIT, MARKER, size
from tests.conftest import Golden, Run, commit, desired, git

FORMATS = (("markdown", "md"), ("text", "txt"), ("json", "json"))
GENERATED_QUEUES = 51  # with the example's six, just over 500 prod monitors


@pytest.fixture(autouse=True)
def _plain_git(plain_git: None) -> None:
    """Every test here runs git as on a fresh machine."""


def edit(repo: Path, file: str, find: str, replace: str) -> None:
    path = repo / file
    text = path.read_text()
    assert find in text, f"{find!r} is no longer in {file}"
    path.write_text(text.replace(find, replace, 1))


NEW_QUEUE = """
  - name: exports
    class: long
    description: Customer data exports.
    worker: {cluster: jobs, service: exports-worker, min_tasks: 1, max_tasks: 4}
    dlq: {name: exports-dlq, max_receive_count: 3}
    topics:
      - {name: jobs-exports}
    runbook: https://runbooks.example.com/jobs/exports
    owner: ledger
"""

LOW_QUEUE = """
  - name: low
    class: long
    description: Jobs that may exceed 10 s (ledger export and import); capped workers instead of an SLO.
    retention_seconds: 864000  # 10 days: its DLQ keeps a message parked late in its life 4 more
    worker: {cluster: jobs, service: low-worker, min_tasks: 1, max_tasks: 5}
    dlq: {name: low-dlq, max_receive_count: 3, retention_seconds: 1209600}
    topics:
      - {name: jobs-low}
    runbook: https://runbooks.example.com/jobs/low
    owner: ledger
"""


def generated_queues(count: int) -> str:
    return "".join(
        f"""
  - name: q{index:03d}
    class: short
    slo_seconds: 60
    worker: {{cluster: jobs, service: q{index:03d}-worker, min_tasks: 1, max_tasks: 8}}
    dlq: {{name: q{index:03d}-dlq, max_receive_count: 3}}
    topics:
      - {{name: jobs-q{index:03d}}}
    runbook: https://runbooks.example.com/jobs/q{index:03d}
    owner: platform
"""
        for index in range(count)
    )


def threshold(repo: Path) -> None:
    edit(repo, "monitors/age.yaml", "thresholds: {critical: 3, warning: 1}", "thresholds: {critical: 3, warning: 1.5}")


def new_queue(repo: Path) -> None:
    path = repo / "queues.yaml"
    path.write_text(path.read_text() + NEW_QUEUE)


def removed_queue(repo: Path) -> None:
    edit(repo, "queues.yaml", LOW_QUEUE, "")
    edit(repo, "environments/prod.yaml", "queues: [low, default]", "queues: [default]")  # else an unknown queue


def notification_target(repo: Path) -> None:
    edit(
        repo,
        "environments/prod.yaml",
        'page: ["@pagerduty-jobs-platform"]',
        'page: ["@opsgenie-jobs-platform", "@oncall-lead@example.com"]',
    )


def message(repo: Path) -> None:
    edit(
        repo,
        "monitors/dlq.yaml",
        "  Find the error in the worker logs, fix it, then redrive the messages to [[queue_name]]\n",
        "  Find the error in the worker logs (`service:[[service]] status:error`), fix it,\n"
        "  then redrive the messages to [[queue_name]]\n",
    )


def many(repo: Path) -> None:
    """Over 500 prod monitors change at once: they renotify sooner, and the DLQ ones say more."""
    edit(repo, "environments/prod.yaml", "renotify_interval: 60", "renotify_interval: 30")
    path = repo / "environments/prod.yaml"
    path.write_text(path.read_text() + PROD_DLQ_MESSAGE)


PROD_DLQ_MESSAGE = """metrics:
  dlq:
    message: |
      [[dlq_name]] holds {{value}} messages: jobs from [[queue_name]] failed [[max_receive_count]] times and are parked.
      In prod, tell the owning team first: customers may be waiting on these jobs.
      Find the error in the worker logs, fix it, then redrive the messages to [[queue_name]]
      (SQS console: "Start DLQ redrive"). They expire after the DLQ's retention period.
"""


def many_base(repo: Path) -> None:
    path = repo / "queues.yaml"
    path.write_text(path.read_text() + generated_queues(GENERATED_QUEUES))


SCENARIOS: dict[str, tuple[Callable[[Path], None] | None, Callable[[Path], None]]] = {
    "threshold": (None, threshold),
    "new-queue": (None, new_queue),
    "removed-queue": (None, removed_queue),
    "notification-target": (None, notification_target),
    "message": (None, message),
    "many": (many_base, many),
}


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_golden_reports(scenario: str, repo: Path, run: Run, golden: Golden) -> None:
    prepare, change = SCENARIOS[scenario]
    if prepare:
        prepare(repo)
        commit(repo, "more queues")
    change(repo)
    # The commit's ID follows the definitions' content: the golden files hold a stand-in.
    head = git(repo, "rev-parse", "HEAD").strip()
    for fmt, suffix in FORMATS:
        code, out, err = run(repo, "--base", "HEAD", "--format", fmt, "--detailed-exitcode")
        assert (code, err) == (2, "")
        assert head[:12] in out or fmt == "text"
        golden(f"diff/{scenario}.{suffix}", _stand_in(out, head))
    code, again, _ = run(repo, "--base", "HEAD", "--format", "markdown")
    assert code == 0
    golden_md = (Path(__file__).parent / "golden" / "diff" / f"{scenario}.md").read_text()
    assert _stand_in(again, head) == golden_md, "not deterministic"


def _stand_in(text: str, sha: str) -> str:
    return text.replace(sha, "0" * 40).replace(sha[:12], "0" * 12)


def test_two_commits_and_the_working_tree(repo: Path, run: Run) -> None:
    """Committed head against its parent, and the working tree against a commit; neither run touches files."""
    threshold(repo)
    commit(repo, "warn sooner")
    total = desired(repo)
    removed_queue(repo)  # left uncommitted: the working tree differs from HEAD
    before = {p: p.read_bytes() for p in repo.rglob("*") if p.is_file() and ".git" not in p.parts}
    status = git(repo, "status", "--porcelain")

    code, out, _ = run(repo, "--base", "HEAD~1", "--head", "HEAD", "--detailed-exitcode")
    assert code == 2
    assert out.endswith(f"Diff: 0 to create, 9 to update, 0 to delete, {total - 9} unchanged.\n")
    assert "prod/low/" not in out, "the uncommitted removal is not part of HEAD"

    code, out, _ = run(repo, "--base", "HEAD", "--detailed-exitcode")
    assert code == 2
    # low's monitors and composites in every environment, and its downtimes in prod and dev.
    after = desired(repo)
    assert out.endswith(f"Diff: 0 to create, 3 to update, {total - after} to delete, {after - 3} unchanged.\n")

    code, out, _ = run(repo, "--base", "HEAD", "--head", "HEAD", "--detailed-exitcode")
    assert code == 0
    assert "Who gets paged: no notification target added, removed or changed." in out
    assert out.endswith(f"Diff: 0 to create, 0 to update, 0 to delete, {total} unchanged.\n")
    assert run(repo, "--base", "HEAD~1", "--head", "HEAD")[0] == 0, "changes exit 0 without --detailed-exitcode"

    assert {p: p.read_bytes() for p in repo.rglob("*") if p.is_file() and ".git" not in p.parts} == before
    assert git(repo, "status", "--porcelain") == status


def test_definitions_in_a_subfolder_of_the_repository(
    example_copy: Path, tmp_path: Path, run: Run, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A folder name may start with a space: git's prefix is used as it is."""
    root = tmp_path / "repo"
    (root / " ops").mkdir(parents=True)
    example_copy.rename(root / " ops" / "observability")
    (root / "README.md").write_text("not a definition\n")
    git(root, "init", "-q")
    commit(root, "base")
    definitions = root / " ops" / "observability"
    new_queue(definitions)
    monkeypatch.chdir(tmp_path)
    code, out, _ = run(definitions.relative_to(tmp_path), "--base", "HEAD", "--env", "dev", "--format", "json")
    assert code == 0
    assert '"create": 22' in out  # 14 monitors, 2 composites and 6 downtimes of its two windows


def test_a_moved_definitions_folder_is_found_with_base_definitions(repo: Path, run: Run) -> None:
    total = desired(repo)
    moved = repo / "observability"
    moved.mkdir()
    for part in ("queues.yaml", "environments", "monitors", "dashboards"):
        (repo / part).rename(moved / part)
    commit(repo, "move the definitions")
    code, _, err = run(moved, "--base", "HEAD~1")
    assert code == 1 and "has no queues.yaml in observability/" in err and "--base-definitions" in err
    code, out, _ = run(moved, "--base", "HEAD~1", "--base-definitions", ".", "--detailed-exitcode")
    assert code == 0 and out.endswith(f"Diff: 0 to create, 0 to update, 0 to delete, {total} unchanged.\n")
    code, _, err = run(moved, "--base", "HEAD~1", "--base-definitions", "../elsewhere")
    assert code == 1 and "is not a folder inside the repository" in err


def test_environments_only_in_one_revision_are_all_creates_or_all_deletes(repo: Path, run: Run) -> None:
    staging = repo / "environments" / "staging.yaml"
    counts = {env: desired(repo, env) for env in ("dev", "staging", "prod")}
    (repo / "environments" / "qa.yaml").write_text(staging.read_text().replace("name: staging", "name: qa"))
    (repo / "environments" / "dev.yaml").unlink()
    code, out, _ = run(repo, "--base", "HEAD", "--format", "json")
    assert code == 0
    envs = {e["env"]: e["summary"] for e in json.loads(out)["environments"]}
    assert envs["dev"] == {"create": 0, "update": 0, "delete": counts["dev"], "unchanged": 0}
    assert envs["qa"] == {"create": counts["staging"], "update": 0, "delete": 0, "unchanged": 0}
    assert envs["prod"]["unchanged"] == counts["prod"]

    code, out, _ = run(repo, "--base", "HEAD", "--env", "prod", "--env", "qa")
    assert code == 0
    assert [line.split()[0] for line in out.splitlines()[3:5]] == ["prod", "qa"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--base", "no-such-branch"], "unknown git revision 'no-such-branch': check the name, or fetch it"),
        (["--base", "HEAD", "--head", "v9"], "unknown git revision 'v9'"),
        (["--base=--output=x"], "'--output=x' is not a git revision"),
        (["--base", "HEAD", "--env", "nowhere"], "environment 'nowhere' is in neither revision: use one of: dev"),
    ],
)
def test_bad_arguments_are_one_clear_error(repo: Path, run: Run, args: list[str], message: str) -> None:
    code, out, err = run(repo, *args)
    assert (code, out) == (1, "")
    assert err.startswith("error: ") and message in err
    assert "Traceback" not in err


def test_a_folder_outside_git_is_a_clear_error(example_copy: Path, run: Run) -> None:
    code, _, err = run(example_copy, "--base", "main")
    assert code == 1
    assert "is not inside a git repository" in err


def test_without_git_on_the_path(repo: Path, run: Run, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    code, _, err = run(repo, "--base", "HEAD")
    assert code == 1
    assert "error: git is not installed" in err


def test_a_base_without_definitions_is_empty_and_the_preview_says_so(repo: Path, run: Run) -> None:
    """The pull request that adds obs: its base has no definitions anywhere, so everything is new."""
    total = desired(repo)
    git(repo, "checkout", "-q", "--orphan", "empty")
    git(repo, "rm", "-rq", "--cached", ".")
    (repo / "notes.txt").write_text("nothing here yet\n")
    git(repo, "add", "notes.txt")
    git(repo, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "-m", "empty")
    for fmt, said in (
        ("text", "WARNING: the base revision HEAD has no definitions yet: everything is new."),
        ("markdown", "> the base revision HEAD has no definitions yet: everything is new."),
        ("json", '"kind": "empty-base"'),
    ):
        code, out, err = run(repo, "--base", "HEAD", "--format", fmt, "--detailed-exitcode")
        assert (code, err) == (2, "")
        assert said in out
    assert f"Diff: {total} to create, 0 to update, 0 to delete, 0 unchanged." in run(repo, "--base", "HEAD")[1]


def test_a_revision_holds_only_the_files_load_reads_and_goes_away(repo: Path) -> None:
    (repo / "dashboards" / "screenshots").mkdir()
    (repo / "dashboards" / "screenshots" / "oncall.png").write_bytes(bytes(range(256)) * 4096)
    (repo / "monitors" / "README.md").write_text("how to add a metric\n")
    commit(repo, "notes and pictures")
    with revision.checked_out(repo, "HEAD") as folder:
        files = sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file())
        wanted = sorted(p.relative_to(repo).as_posix() for p in repo.rglob("*.yaml") if ".git" not in p.parts)
        assert files == wanted
    assert not folder.exists()


def test_a_linked_definition_is_a_clear_error_not_a_false_delete(repo: Path, run: Run) -> None:
    prod = repo / "environments" / "prod.yaml"
    prod.rename(repo / "prod.yaml")
    prod.symlink_to(Path("..") / "prod.yaml")
    (repo / "monitors" / "notes.md").symlink_to(Path("..") / "queues.yaml")  # not a definition: no matter
    commit(repo, "prod from a link")
    code, out, err = run(repo, "--base", "HEAD")
    assert (code, out) == (1, "")
    assert "environments/prod.yaml is a symbolic link at commit " in err
    assert "commit the file itself in place of the link" in err


def test_head_that_fails_validation_fails_the_preview(repo: Path, run: Run) -> None:
    edit(repo, "monitors/age.yaml", "priority: 2", "priority: 9")
    code, out, err = run(repo, "--base", "HEAD", "--format", "markdown")
    assert (code, out) == (1, "")
    assert err.startswith("error: monitors/age.yaml:13: priority:"), err

    commit(repo, "broken")
    code, _, err = run(repo, "--base", "HEAD~1", "--head", "HEAD")
    assert code == 1
    assert err.startswith("error: the head revision 'HEAD' does not validate: fix it there\nmonitors/age.yaml:13:")


def test_base_that_does_not_load_names_the_revision(repo: Path, run: Run) -> None:
    edit(repo, "queues.yaml", "class: feature\n", "class: featured\n")
    commit(repo, "broken")
    edit(repo, "queues.yaml", "class: featured\n", "class: feature\n")  # the working tree is fine again
    code, _, err = run(repo, "--base", "HEAD")
    assert code == 1
    assert err.startswith("error: the base revision 'HEAD' does not load with this version of obs: ")
    assert "queues.yaml:" in err and "unknown class 'featured'" in err


def test_many_changes_fit_one_comment_and_say_what_was_left_out() -> None:
    comment = (Path(__file__).parent / "golden" / "diff" / "many.md").read_text()
    assert comment.startswith(MARKER + "\n")
    assert size(comment) <= BUDGET < LIMIT
    assert re.search(r"\| `prod` \| 0 \| 459 \| 0 \| \d+ \|", comment), "459 updates in prod, nothing else"
    assert (
        "Left out to fit a pull-request comment: the list of 10 changed resources in 1 queue; "
        "the 317 field changes of 316 updated resources; the line diffs of 18 text fields." in comment
    )
    assert "`obs diff --base HEAD --env prod --format text` shows everything" in comment
