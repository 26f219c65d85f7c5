"""The layering contracts in pyproject.toml hold, and they do fail when someone breaks a rule."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
LINT = Path(sys.executable).with_name("lint-imports")


def lint(package_root: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(package_root)}
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


@pytest.mark.parametrize(
    ("module", "bad_import", "broken"),
    [
        ("core/plan.py", "import sync.datadog.client", "The core is pure"),
        ("core/plan.py", "import yaml", "The core is pure"),
        ("report/changes.py", "import sync.datadog.apply", "Higher layers import lower ones"),
        ("aws/tracing/tracer.py", "import sync.datadog.reads", "Higher layers import lower ones"),
        ("aws/core/findings.py", "import botocore.exceptions", "The AWS checkers take plain data"),
        ("aws/core/facts.py", "import mypy_boto3_sqs", "The AWS checkers take plain data"),
        ("aws/core/checks.py", "import sync.aws.reads.facts", "AWS side: trace and audit orchestrate"),
        ("aws/reads/logs.py", "import sync.aws.tracing.tracer", "AWS side: trace and audit orchestrate"),
        ("aws/auditing/audit.py", "import sync.aws.tracing.resolve", "AWS side: trace and audit orchestrate"),
        ("aws/tracing/report.py", "import sync.aws.reads.clients", "The trace and audit reports render plain data"),
        ("definitions/model.py", "import sync.expand.naming", "Higher layers import lower ones"),
        ("preview/compare.py", "import sync.datadog.client", "The offline preview never loads"),
        ("expand/urls.py", "import urllib3", "Expansion, reports and the model check do no I/O"),
    ],
)
def test_a_wrong_import_breaks_a_contract(tmp_path: Path, module: str, bad_import: str, broken: str) -> None:
    shutil.copytree(ROOT / "sync", tmp_path / "sync", ignore=shutil.ignore_patterns("__pycache__"))
    target = tmp_path / "sync" / module
    target.write_text(target.read_text() + f"\n{bad_import}  # noqa\n")
    result = lint(tmp_path)
    assert result.returncode != 0
    assert f"{broken}" in result.stdout and "BROKEN" in result.stdout, result.stdout
