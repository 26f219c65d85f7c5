"""A change to obs itself: render the base revision with the base's own code, so that a changed default
shows in the preview instead of hiding behind "no changes" (both sides rendered by the head's code agree).

The base is archived from git into a cache folder named after its tree (a tree holds the code and the
definitions alike, so equal trees render alike) and the running obs, and its own `obs render` runs there in a
child process. That runs the base's code: the child gets only what a render needs from the environment, none
of the caller's credentials (AWS, GitHub, Datadog), and the cache is readable by its user only.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.metadata
import io
import json
import os
import shutil
import stat
import subprocess
import sys
import tarfile
import tempfile
import tomllib
from pathlib import Path, PurePosixPath

from sync.core.keys import Key
from sync.core.kinds import KINDS
from sync.core.resources import Resource
from sync.preview import revision
from sync.preview.compare import Rendered

# What makes up obs in a repository that holds it: the package and the file naming its dependencies.
OWN_CODE = ("sync", "pyproject.toml")
# The catalogue obs ships lives outside the package there, and the package links to it.
CATALOGUE_LINK = "sync/definitions/catalogues"
CATALOGUE_SOURCES = ("monitors", "dashboards")
_TIMEOUT = 600  # seconds for the base's render: thousands of queues take a while on a small runner
# All the base's render may see of the caller's environment (LC_* too); PYTHONPATH is set by obs.
_CHILD_ENVIRONMENT = ("PATH", "HOME", "LANG", "TMPDIR", "SYSTEMROOT")


def changed_files(definitions: Path, base: str, head: str | None) -> list[str]:
    """Files of obs itself that differ between the base commit and the head (commit, or working tree with
    files not yet added); none when the repository holds only definitions."""
    revisions = [base, head] if head else [base]
    parts = OWN_CODE + (CATALOGUE_SOURCES if _ships_catalogue(definitions, base, head) else ())
    specs = [f":(top){part}" for part in parts]
    out = revision.git(definitions, "diff", "--name-only", "-z", *revisions, "--", *specs)
    names = {n for n in out.decode(errors="surrogateescape").split("\0") if n}
    if head is None:
        extra = revision.git(definitions, "ls-files", "-z", "--others", "--exclude-standard", "--", *specs)
        names |= {n for n in extra.decode(errors="surrogateescape").split("\0") if n}
    return sorted(names)


def _ships_catalogue(definitions: Path, base: str, head: str | None) -> bool:
    """Whether the repository holds obs with its catalogue: then the catalogue's files are obs's code too (a
    definitions repository's own monitors/ are not)."""
    for at in [base, head] if head else [base]:
        if revision.git(definitions, "ls-tree", "--full-tree", "--name-only", at, "--", CATALOGUE_LINK).strip():
            return True
    top = revision.git(definitions, "rev-parse", "--show-toplevel").decode().strip()
    return head is None and (Path(top) / CATALOGUE_LINK).is_dir()


def render_with_own_code(definitions: Path, commit: str, prefix: str) -> Rendered | None:
    """The base's resources as its own code renders them; None when that cannot be done (the base holds no
    runnable obs, or its render fails), and the preview says so."""
    tree = revision.git(definitions, "rev-parse", f"{commit}^{{tree}}").decode().strip()
    cache = _cache()
    cached = cache / f"render-{_running_obs()}-{tree}-{prefix.encode().hex()}" if cache else None
    if cached is None or not cached.is_dir():
        with tempfile.TemporaryDirectory(prefix="obs-base-code-") as temp:
            source = Path(temp) / "source"
            # From the top: run in a subfolder, git archives only that subfolder.
            top = Path(revision.git(definitions, "rev-parse", "--show-toplevel").decode().strip())
            _extract(revision.git(top, "archive", "--format=tar", commit), source)
            command = _command(source)
            if command is None:
                return None
            out = Path(temp) / "rendered"
            args = ["--definitions", str(source / PurePosixPath(prefix)), "render", "--out", str(out)]
            environ = {k: v for k, v in os.environ.items() if k in _CHILD_ENVIRONMENT or k.startswith("LC_")}
            environ["PYTHONPATH"] = str(source)  # the base's package shadows the installed one
            try:
                done = subprocess.run(
                    [sys.executable, "-c", command, *args],
                    cwd=source,
                    env=environ,
                    capture_output=True,
                    timeout=_TIMEOUT,
                    check=False,
                )
            except subprocess.TimeoutExpired:
                return None
            if done.returncode != 0 or not out.is_dir():
                return None
            rendered = _read(out)
            if cached is not None:
                _keep(out, cached)
            return rendered
    return _read(cached)


def _keep(out: Path, cached: Path) -> None:
    """Cache a render, whole or not at all; a cache that cannot be written only costs the next run time."""
    try:
        staging = Path(tempfile.mkdtemp(prefix=".part-", dir=cached.parent))
    except OSError:
        return
    try:
        shutil.move(str(out), staging / "render")
        (staging / "render").rename(cached)  # fails if a run in parallel got there first: theirs is the same
    except OSError:
        pass
    shutil.rmtree(staging, ignore_errors=True)


def _cache() -> Path | None:
    """The cache folder, private to its user (mode 0700); None, and no cache, when it cannot be made so:
    what is read back from it is trusted as the base's render."""
    explicit = os.environ.get("OBS_CACHE_DIR")
    folder = Path(explicit) if explicit else Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "obs"
    try:
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        found = folder.lstat()
        if not stat.S_ISDIR(found.st_mode) or found.st_uid != os.getuid():
            return None
        if stat.S_IMODE(found.st_mode) != 0o700:
            folder.chmod(0o700)
    except OSError:
        return None
    return folder


@functools.cache
def _running_obs() -> str:
    """The version of the obs running now, and a digest of its code: another obs may read renders otherwise."""
    try:
        version = importlib.metadata.version("obs")
    except importlib.metadata.PackageNotFoundError:
        version = "unknown"
    package = Path(__file__).resolve().parent.parent
    digest = hashlib.sha256()
    for path in sorted(package.rglob("*.py")):
        digest.update(path.relative_to(package).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    return f"obs-{version}-{digest.hexdigest()[:16]}"


def _extract(archive: bytes, into: Path) -> None:
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(into, filter="data")


def _command(source: Path) -> str | None:
    """Python that runs the base's own `obs` entry point, as its pyproject.toml names it."""
    try:
        project = tomllib.loads((source / "pyproject.toml").read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return None
    entry = project.get("project", {}).get("scripts", {}).get("obs")
    if not isinstance(entry, str) or ":" not in entry:
        return None
    module, function = entry.split(":", 1)
    if not all(part.isidentifier() for part in [*module.split("."), function]):
        return None
    return f"import sys; from {module} import {function}; sys.argv[0] = 'obs'; sys.exit({function}())"


def _read(folder: Path) -> Rendered:
    """Each environment's rendered bodies back as resources, keyed by the ownership marker they carry."""
    rendered: dict[str, list[Resource]] = {}
    for env_folder in sorted(p for p in folder.iterdir() if p.is_dir()):
        for kind in KINDS:
            for path in sorted((env_folder / kind.plural).glob("*.json")):
                body = json.loads(path.read_text(encoding="utf-8"))
                mark = kind.mark(body)  # whichever namespace: the comparison owns it as the live plan would
                key = mark.key if mark is not None else _stem_key(path.stem)
                rendered.setdefault(env_folder.name, []).append(
                    Resource(kind, key, body, env_folder.name, kind.queue(key, body))
                )
    return rendered


def _stem_key(stem: str) -> str:
    """The key a rendered file is named for (`obs render` names it by the key, see Key.file_stem)."""
    found = Key.from_file_stem(stem)
    return str(found) if found is not None else stem.replace(".", "/")
