"""What a plan file is bound to, read where obs runs: the API host, the org of the API key, the definitions'
git commit, and the clock."""

from __future__ import annotations

import argparse
import os
import subprocess
from datetime import UTC, datetime, timedelta
from pathlib import Path, PurePosixPath

from sync.core import durations
from sync.datadog.client import Datadog, RequestFailed
from sync.errors import ObsError
from sync.report.saved_plan import Binding

DEFAULT_MAX_AGE = "24h"
_MAX_AGE_LIMIT = 30 * 1440  # minutes: an approval older than a month describes another org


def max_age(text: str) -> timedelta:
    """--max-age: how old an approved plan may be, e.g. 90m, 24h or 2d."""
    minutes = durations.minutes(text) or 0
    if not 0 < minutes <= _MAX_AGE_LIMIT:
        raise argparse.ArgumentTypeError("write a duration of at most 30 days, e.g. 90m, 24h or 2d")
    return timedelta(minutes=minutes)


def now() -> datetime:
    return datetime.now(UTC)


def binding(dd: Datadog, definitions: Path) -> Binding:
    commit, dirty = checkout(definitions)
    return Binding(dd.host, _org(dd), commit, dirty)


def checkout(definitions: Path) -> tuple[str | None, bool]:
    """The definitions' commit, and whether the files obs reads differ from it (tracked files changed, or
    YAML not yet added); (None, False) outside a git checkout."""
    head = _git(definitions, "rev-parse", "--verify", "--quiet", "HEAD")
    if head is None:
        return None, False
    status = _git(definitions, "status", "--porcelain", "-z", "--untracked-files=all", "--", ".") or ""
    entries = [e for e in status.split("\0") if len(e) > 3]
    dirty = any(e[:2] != "??" or PurePosixPath(e[3:]).suffix in (".yaml", ".yml") for e in entries)
    return head.strip(), dirty


def _org(dd: Datadog) -> str | None:
    try:
        return dd.key_org()
    except RequestFailed as exc:
        raise ObsError.of(
            f"could not identify the org of DD_API_KEY: {exc}",
            "check that DD_API_KEY is a valid API key of this org; try again",
        ) from None


def _git(folder: Path, *args: str) -> str | None:
    environ = {**os.environ, "LC_ALL": "C"}
    try:
        done = subprocess.run(["git", *args], cwd=folder, capture_output=True, env=environ, check=False)
    except (FileNotFoundError, NotADirectoryError):
        return None
    return done.stdout.decode(errors="surrogateescape") if done.returncode == 0 else None
