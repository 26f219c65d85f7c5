"""`obs init DIR`: a new definitions folder that validates, plans offline and passes `obs test` as written,
using the catalogue shipped with obs by name, so nothing in it repeats the catalogue."""

from __future__ import annotations

import argparse
import difflib
import importlib.metadata
import json
import shlex
from functools import cache
from pathlib import Path

import botocore.session

from sync.cli import init_files
from sync.cli.conventions import SUMMARIES, Commands, Exit
from sync.core import namespaces
from sync.definitions import schema
from sync.errors import ObsError


def register(commands: Commands) -> None:
    parser = commands.add_parser("init", help=SUMMARIES["init"])
    parser.add_argument("dir", type=Path, metavar="DIR", help="the folder to create (absent or empty)")
    parser.add_argument(
        "--env",
        action="append",
        dest="envs",
        metavar="NAME",
        help="an environment to declare (repeat for each; default: staging and prod)",
    )
    parser.add_argument("--site", default="datadoghq.com", help="the Datadog site of every environment")
    parser.add_argument("--region", default="us-east-1", help="the AWS region of every environment")
    parser.add_argument(
        "--namespace",
        help="who these definitions are in a Datadog org shared with other teams (default: from DIR's name)",
    )
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    envs = _environments(args.envs or ["staging", "prod"])
    _check_site(args.site)
    _check_region(args.region)
    target: Path = args.dir
    _check_empty(target)
    namespace = args.namespace or init_files.namespace_of(target.absolute().name)
    if not namespaces.valid(namespace):
        raise ObsError.of(
            f"--namespace {namespace!r} is not a namespace",
            "use 1 to 40 lowercase letters, digits and single dashes, starting with a letter, e.g. payments-jobs",
        )
    written = init_files.files(envs, args.site, args.region, _version(), namespace)
    for relative, text in written.items():
        path = target / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    print(f"wrote {len(written)} files to {target}: fill in queues.yaml and environments/, then run")
    shown = shlex.quote(str(target))
    print(f"  obs --definitions {shown} validate && obs --definitions {shown} test")
    return Exit.OK


def _environments(names: list[str]) -> list[str]:
    seen: list[str] = []
    for name in names:
        if not init_files.ENV_NAME.fullmatch(name):
            raise ObsError.of(
                f"--env {name!r} is not an environment name", "use lowercase letters, digits and -, e.g. prod"
            )
        if name not in seen:
            seen.append(name)
    return seen


def _check_site(site: str) -> None:
    _check_choice("--site", site, _sites(), "a Datadog site", f"use one of: {', '.join(_sites())}")


def _check_choice(flag: str, value: str, known: list[str], what: str, fix: str) -> None:
    if value not in known:
        close = difflib.get_close_matches(value, known, n=1)
        hint = f"did you mean {close[0]}? " if close else ""
        raise ObsError.of(f"{flag} {value!r} is not {what}", f"{hint}{fix}")


@cache
def _sites() -> list[str]:
    """The sites the environment schema accepts: one list, so init never writes one validate refuses."""
    environment = json.loads(schema.files()["environment.schema.json"])
    return list(environment["properties"]["datadog"]["properties"]["site"]["enum"])


def _check_region(region: str) -> None:
    _check_choice("--region", region, _regions(), "an AWS region botocore knows", "e.g. us-east-1")


@cache
def _regions() -> list[str]:
    session = botocore.session.get_session()
    return sorted(
        {
            region
            for partition in session.get_available_partitions()
            for region in session.get_available_regions("sqs", partition_name=partition)
        }
    )


def _check_empty(target: Path) -> None:
    if target.exists() and not target.is_dir():
        raise ObsError.of(f"{target} exists and is not a folder", "name a new or empty folder")
    if target.is_dir() and any(target.iterdir()):
        raise ObsError.of(
            f"{target} is not empty", "name a new or empty folder: obs init never overwrites or mixes in files"
        )


def _version() -> str:
    try:
        return importlib.metadata.version("obs")
    except importlib.metadata.PackageNotFoundError:
        return ""
