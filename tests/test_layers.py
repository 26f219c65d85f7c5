"""The layering contracts in pyproject.toml hold, and they do fail when someone breaks a rule."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LINT = Path(sys.executable).with_name("lint-imports")


def lint(package_root: Path) -> subprocess.CompletedProcess[str]:
    # Wide columns: a contract's name and its report stay on one line each.
    env = {**os.environ, "PYTHONPATH": str(package_root), "COLUMNS": "1000"}
    return subprocess.run(
        [str(LINT), "--config", str(ROOT / "pyproject.toml"), "--no-cache"],
        cwd=package_root,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )


def test_the_tree_keeps_every_contract() -> None:
    result = lint(ROOT)
    assert result.returncode == 0, result.stdout
    assert "0 broken" in result.stdout


# A wrong import, the module it goes into, and the contract that must report it.
WRONG = [
    ("core/plan.py", "sync.datadog.client", "The core is pure"),
    ("core/plan.py", "yaml", "The core is pure"),
    ("report/changes.py", "sync.datadog.apply", "Higher layers import lower ones"),
    ("aws/tracing/tracer.py", "sync.datadog.reads", "Higher layers import lower ones"),
    ("aws/core/findings.py", "botocore.exceptions", "The AWS checkers take plain data"),
    ("aws/core/facts.py", "mypy_boto3_sqs", "The AWS checkers take plain data"),
    ("aws/core/checks.py", "sync.aws.reads.facts", "AWS side: trace and audit orchestrate"),
    ("aws/reads/logs.py", "sync.aws.tracing.tracer", "AWS side: trace and audit orchestrate"),
    ("aws/auditing/audit.py", "sync.aws.tracing.resolve", "AWS side: trace and audit orchestrate"),
    ("aws/tracing/report.py", "sync.aws.reads.clients", "The trace and audit reports render plain data"),
    ("definitions/model.py", "sync.expand.naming", "Higher layers import lower ones"),
    ("preview/compare.py", "sync.datadog.client", "The offline preview never loads"),
    ("expand/urls.py", "urllib3", "Expansion, reports and the model check do no I/O"),
]


def test_each_wrong_import_breaks_its_contract(tmp_path: Path) -> None:
    # Every wrong import in one copy of the tree, linted once: the report names each illegal import under the
    # contract it breaks, so one run shows every contract catching its own (a run per import took 13 times as
    # long, and proved no more).
    shutil.copytree(ROOT / "sync", tmp_path / "sync", ignore=shutil.ignore_patterns("__pycache__"))
    for module, target, _ in WRONG:
        path = tmp_path / "sync" / module
        path.write_text(path.read_text() + f"\nimport {target}  # noqa\n")
    result = lint(tmp_path)
    assert result.returncode != 0
    broken = _broken_contracts(result.stdout)
    for module, target, contract in WRONG:
        source = "sync." + module.removesuffix(".py").replace("/", ".")
        shown = target if target.startswith("sync.") else target.split(".")[0]  # a package outside: its name
        (report,) = [text for name, text in broken.items() if name.startswith(contract)]
        assert f"{source} -> {shown} (" in report, f"{contract} does not report {source} -> {shown}:\n{report}"


def _broken_contracts(stdout: str) -> dict[str, str]:
    """Each broken contract's report, by the contract's name (a name is the line above a rule of dashes)."""
    lines = stdout.split("Broken contracts", 1)[1].splitlines()[2:]
    titles = [i - 1 for i, line in enumerate(lines) if i and line and set(line) == {"-"}]
    ends = [*titles[1:], len(lines)]
    return {lines[t]: "\n".join(lines[t + 2 : end]) for t, end in zip(titles, ends, strict=True)}
