"""Read the definitions folder as it was at a git revision, without touching the working tree."""

from __future__ import annotations

import os
import subprocess
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path, PurePosixPath

from sync.definitions.catalogue import FILE as CATALOGUE
from sync.definitions.load import INVENTORY
from sync.errors import ObsError

PARTS = (INVENTORY, CATALOGUE, "environments", "monitors", "dashboards")
_FILE_MODES = ("100644", "100755")  # regular files; submodules are not definitions
_LINK_MODE = "120000"


@contextmanager
def checked_out(definitions: Path, ref: str, inside: str | None = None) -> Iterator[Path]:
    """A temporary folder holding the definition files of `definitions` as committed at `ref`; `inside` is
    the folder's path in that revision from the repository root, when it has moved since."""
    prefix = repository_prefix(definitions) if inside is None else _prefix(inside)
    commit = resolve(definitions, ref)
    files = _listed(definitions, commit, prefix)
    if not any(path == f"{prefix}{INVENTORY}" for path, _ in files):
        where = f"{prefix.rstrip('/')}/" if prefix else "the repository root"
        raise ObsError.of(
            f"revision '{ref}' has no {INVENTORY} in {where}",
            "pick a revision that has the definitions, or point --definitions at the folder that holds them "
            "(--base-definitions if the folder has moved since)",
        )
    contents = _blobs(definitions, [blob for _, blob in files])
    with tempfile.TemporaryDirectory(prefix="obs-revision-") as temp:
        root = Path(temp)
        for (path, _), content in zip(files, contents, strict=True):
            target = root / PurePosixPath(path[len(prefix) :])
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(content)
        yield root


def defines(definitions: Path, ref: str, inside: str | None = None) -> bool:
    """Whether the revision has any definitions at all: false for the commit before obs was added (no
    queues.yaml anywhere in its tree), true when it has some, even somewhere else (a moved folder)."""
    commit = resolve(definitions, ref)
    prefix = repository_prefix(definitions) if inside is None else _prefix(inside)
    if _listed(definitions, commit, prefix):
        return True
    names = git(definitions, "ls-tree", "-r", "-z", "--name-only", "--full-tree", commit)
    return any(PurePosixPath(n).name == INVENTORY for n in names.decode(errors="surrogateescape").split("\0"))


def prefix_of(definitions: Path, inside: str | None) -> str:
    """The definitions folder's path in a revision, from the repository root ('' or 'sub/dir/')."""
    return repository_prefix(definitions) if inside is None else _prefix(inside)


def repository_prefix(definitions: Path) -> str:
    """Where the definitions folder sits inside its git repository: '' at the root, else 'sub/dir/'."""
    if not definitions.is_dir():
        raise ObsError.of(f"no definitions folder {definitions}", "point --definitions at an existing folder")
    # Only the newline goes: a folder name may start with a space, and need not be UTF-8 (like ls-tree's paths).
    return git(definitions, "rev-parse", "--show-prefix").decode(errors="surrogateescape").removesuffix("\n")


def _prefix(inside: str) -> str:
    path = PurePosixPath(inside)
    if path.is_absolute() or ".." in path.parts:
        raise ObsError.of(f"'{inside}' is not a folder inside the repository", "give its path from the repository root")
    return "" if str(path) == "." else f"{path}/"


def resolve(definitions: Path, ref: str) -> str:
    """The commit `ref` names; a clear error for names git does not know."""
    if not ref or ref.startswith("-"):
        raise ObsError.of(f"'{ref}' is not a git revision", "give a branch, tag or commit, e.g. --base origin/main")
    done = _run(definitions, "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}")
    if done.returncode != 0:
        raise ObsError.of(
            f"unknown git revision '{ref}'",
            "check the name, or fetch it first (in CI, check out with full history: fetch-depth: 0)",
        )
    return done.stdout.decode().strip()


def _listed(definitions: Path, commit: str, prefix: str) -> list[tuple[str, str]]:
    """(path from the repository root, blob id) of every file `load` reads; notes, images and subfolders stay out."""
    pathspecs = [f"{prefix}{part}" for part in PARTS]
    out = git(definitions, "ls-tree", "-r", "-z", "--full-tree", commit, "--", *pathspecs)
    files = []
    for entry in out.split(b"\0"):
        if not entry:
            continue
        meta, path = entry.decode(errors="surrogateescape").split("\t", 1)
        mode, kind, blob = meta.split()
        if not _read_by_load(path[len(prefix) :]):
            continue
        if mode == _LINK_MODE:
            # Left out, the link would read as a deleted file and the preview would show false deletes.
            raise ObsError.of(
                f"{path} is a symbolic link at commit {commit[:12]}, and obs diff reads no links from git",
                "commit the file itself in place of the link",
            )
        if kind == "blob" and mode in _FILE_MODES:
            files.append((path, blob))
    return sorted(files)


def _read_by_load(relative: str) -> bool:
    """Whether `load` reads this path of the definitions folder: the inventory, a part, or a YAML file in one."""
    folder, _, name = relative.rpartition("/")
    return relative in PARTS or (folder in PARTS and PurePosixPath(name).suffix in (".yaml", ".yml"))


def _blobs(definitions: Path, ids: Sequence[str]) -> list[bytes]:
    """The contents of the given blobs, read in one `git cat-file --batch`."""
    if not ids:
        return []
    out = git(definitions, "cat-file", "--batch", stdin="".join(f"{blob}\n" for blob in ids).encode())
    contents, at = [], 0
    for blob in ids:
        header_end = out.index(b"\n", at)
        header = out[at:header_end].decode()
        if header.endswith(" missing"):
            raise ObsError.of(
                f"git has no object {blob}, a definition file of the revision: the repository is incomplete",
                "run git fsck, or clone the repository again",
            )
        name, _, size = header.split()
        if name != blob:
            raise ObsError.of(f"git returned object {name} when asked for {blob}", "report it")
        start = header_end + 1
        contents.append(out[start : start + int(size)])
        at = start + int(size) + 1  # each object is followed by a newline
    return contents


def git(cwd: Path, *args: str, stdin: bytes | None = None) -> bytes:
    done = _run(cwd, *args, stdin=stdin)
    if done.returncode != 0:
        message = done.stderr.decode(errors="replace").strip()
        if "not a git repository" in message:
            raise ObsError.of(
                f"{cwd} is not inside a git repository",
                "run obs diff in a clone of the definitions repository (or point --definitions into one)",
            )
        raise ObsError.of(f"git {args[0]} failed: {message or f'exit {done.returncode}'}", "check the repository")
    return done.stdout


def _run(cwd: Path, *args: str, stdin: bytes | None = None) -> subprocess.CompletedProcess[bytes]:
    try:
        # LC_ALL=C: the messages matched below are git's English ones, whatever the user's locale.
        environ = {**os.environ, "LC_ALL": "C"}
        return subprocess.run(["git", *args], cwd=cwd, input=stdin, capture_output=True, check=False, env=environ)
    except FileNotFoundError:
        raise ObsError.of("git is not installed", "install git: obs diff reads the base revision from it") from None


def commit_or_none(definitions: Path, ref: str) -> str | None:
    """The commit `ref` names, or None (a repository without commits has no HEAD)."""
    done = _run(definitions, "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}")
    return done.stdout.decode().strip() if done.returncode == 0 else None
