"""obs as pip installs it: a wheel built from this checkout carries the standard catalogue's files (its folders
are links in the checkout) and, run from it alone, starts a definitions set outside the repository that
validates, passes obs test and plans offline."""

from __future__ import annotations

import json
import shutil
import site
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest

from tests.conftest import ROOT

FIRST_HOUR = ROOT / "tests" / "fixtures" / "first_hour"
CATALOGUE = "sync/definitions/catalogues/standard"


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The wheel pip would build: setuptools' build backend run on a copy of the checkout's packaged files."""
    source = tmp_path_factory.mktemp("source")
    ignore = shutil.ignore_patterns("__pycache__")
    shutil.copytree(ROOT / "sync", source / "sync", symlinks=True, ignore=ignore)  # the catalogue's links as links
    for folder in ("monitors", "dashboards"):
        shutil.copytree(ROOT / folder, source / folder, ignore=ignore)
    for file in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy(ROOT / file, source / file)
    out = tmp_path_factory.mktemp("dist")
    build = "import sys; from setuptools import build_meta; print(build_meta.build_wheel(sys.argv[1]))"
    done = subprocess.run(
        [sys.executable, "-c", build, str(out)], cwd=source, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    return out / done.stdout.strip().splitlines()[-1]


def test_the_wheel_carries_every_catalogue_file_as_a_file(wheel: Path) -> None:
    with zipfile.ZipFile(wheel) as archive:
        entries = {info.filename: info for info in archive.infolist()}
        for folder in ("monitors", "dashboards"):
            shipped = sorted(p.name for p in (ROOT / folder).glob("*.yaml"))
            packed = sorted(Path(n).name for n in entries if n.startswith(f"{CATALOGUE}/{folder}/"))
            assert packed == shipped and packed, folder
            for name in shipped:
                info = entries[f"{CATALOGUE}/{folder}/{name}"]
                assert (info.external_attr >> 16) & 0o170000 != 0o120000, name  # not a symbolic link
                assert archive.read(info) == (ROOT / folder / name).read_bytes(), name


# Runs obs's commands one after another in one interpreter (each start costs seconds on a busy machine), with
# the wheel's files first on the path and no site hooks (-S): the checkout's editable install stays out of reach,
# the dependencies come from site-packages after it. Prints each command's [exit code, stdout, stderr] as JSON.
RUNNER = """
import contextlib, io, json, sys
installed, *rest = json.loads(sys.argv[1])
sys.path[:0] = [installed, *rest]
import sync
from sync.cli.app import main
assert sync.__file__.startswith(installed), sync.__file__
said = []
for argv in json.loads(sys.argv[2]):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(argv)
        except SystemExit as exit:  # --version
            code = exit.code
    said.append([code, out.getvalue(), err.getvalue()])
print(json.dumps(said))
"""


def obs(installed: Path, home: Path, *commands: list[str]) -> list[tuple[int, str, str]]:
    paths = json.dumps([str(installed), *site.getsitepackages()])
    done = subprocess.run(
        [sys.executable, "-S", "-c", RUNNER, paths, json.dumps(commands)],
        cwd=home,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return [(code, out, err) for code, out, err in json.loads(done.stdout)]


def test_a_first_hour_from_the_wheel_alone(wheel: Path, tmp_path: Path) -> None:
    installed = tmp_path / "installed"
    with zipfile.ZipFile(wheel) as archive:
        archive.extractall(installed)
    home = tmp_path / "home"  # outside the repository: nothing of it is within reach
    home.mkdir()
    version = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    init = ["init", "my-defs", "--env", "staging", "--env", "prod", "--site", "datadoghq.eu", "--region", "eu-west-1"]
    [said_version, (code, _, err)] = obs(installed, home, ["--version"], init)
    assert said_version == (0, f"obs {version}\n", "")
    assert (code, err) == (0, ""), err

    defs = home / "my-defs"
    for file in ("queues.yaml", "catalogue.yaml"):
        shutil.copy(FIRST_HOUR / file, defs / file)
    for scenario, queue in (("short", "payments"), ("long", "emails"), ("feature", "thumbnails")):
        [path] = (defs / "scenarios").glob(f"{scenario}-*.yaml")
        lines = path.read_text().split("\n")
        path.write_text("\n".join(f"queue: {queue}" if t.startswith("queue: ") else t for t in lines))
    validated, tested, planned = obs(
        installed,
        home,
        ["--definitions", "my-defs", "validate"],
        ["--definitions", "my-defs", "test"],
        ["--definitions", "my-defs", "plan", "--env", "prod", "--offline"],
    )
    assert validated[0] == 0 and validated[1].startswith("ok: 3 queues, "), validated
    assert tested[0] == 0 and "6 of 6 scenario runs passed" in tested[1], tested
    code, out, err = planned
    assert (code, err) == (0, ""), err
    assert "dashboard prod/oncall" in out and "+ monitor prod/thumbnails/" in out
