"""The AWS checkers run on plain data: loading every module of the pure floor loads no AWS client."""

from __future__ import annotations

import os
import pkgutil
import subprocess
import sys
from pathlib import Path

import sync.aws.core

ROOT = Path(__file__).resolve().parents[2]
CLIENTS = ("boto3", "botocore", "urllib3")


def loaded_after_importing(modules: list[str]) -> set[str]:
    """Top-level packages a fresh interpreter holds after importing `modules`."""
    code = "import importlib, sys\n" + "".join(f"importlib.import_module({m!r})\n" for m in modules)
    code += "print('\\n'.join(sorted({name.split('.')[0] for name in sys.modules})))"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, check=True)
    return set(result.stdout.split())


def test_the_pure_floor_loads_no_aws_client() -> None:
    modules = [info.name for info in pkgutil.iter_modules(sync.aws.core.__path__, "sync.aws.core.")]
    assert "sync.aws.core.checks" in modules and "sync.aws.core.audit" in modules
    assert not set(CLIENTS) & loaded_after_importing(modules)


def test_the_reads_do_load_boto3() -> None:
    # the same probe sees a client when one is loaded, so the test above can fail
    assert {"boto3", "botocore"} <= loaded_after_importing(["sync.aws.reads.clients"])
