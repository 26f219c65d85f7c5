"""A hint never names an option the command lacks.

Two guards. Every message text in the package is read from its source: an option after `obs COMMAND` must be
one of that command's, an option in a command's own module one of that command's, and any other option one
of some command's (an `aws ...` command line is the AWS CLI's and is not checked). Then the commands are run
into the errors a user meets first, without credentials among them, and each option their hints name is looked
up in the parser of the command that was run. The options are read from the parser itself, so an option
renamed or a command added later is checked too."""

from __future__ import annotations

import argparse
import ast
import importlib
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from sync.cli.app import main, parser
from sync.cli.conventions import COMMANDS as COMMAND_TABLE

from .conftest import JOBS, ROOT

FLAG = re.compile(r"--[a-z][a-z0-9-]*")
LONE = re.compile(r"--[a-z][a-z0-9-]*(=\S*)?")  # a string that is one option, as argparse or git is given it
# Where a hint's clause ends: what follows is about the command that was run again.
CLAUSE_END = re.compile(r"[;()\[\]\n]|: |, or |, ")


def _options(sub: argparse.ArgumentParser) -> set[str]:
    return {option for action in sub._actions for option in action.option_strings}


def _commands(top: argparse.ArgumentParser, prefix: str = "") -> dict[str, set[str]]:
    """Each command and subcommand ('maintenance start') with its options (the global ones included)."""
    found: dict[str, set[str]] = {}
    for action in top._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                path = f"{prefix}{name}"
                found[path] = _options(sub) | _options(top) if prefix else _options(sub)
                found |= _commands(sub, f"{path} ")
    return found


COMMANDS = _commands(parser())


def _owner(words: list[str], start: int) -> str | None:
    """The command named by `obs WORD [WORD]` at words[start:], the longest that exists."""
    two = " ".join(words[start + 1 : start + 3])
    if two in COMMANDS:
        return two
    one = words[start + 1] if start + 1 < len(words) else ""
    return one if one in COMMANDS else None


def named(text: str, running: str | None) -> Iterator[tuple[str | None, str]]:
    """Each option a text names, with the command it belongs to: the one an `obs COMMAND` before it in the
    same clause names, else `running` (None: some command). Options of an `aws` command line are skipped."""
    for clause in CLAUSE_END.split(text):
        owner: str | None = running
        skipping = False
        words = clause.replace("`", " ").split()
        for index, word in enumerate(words):
            if word == "aws":
                skipping = True
            elif word == "obs" and _owner(words, index) is not None:
                owner, skipping = _owner(words, index), False
            elif not skipping:
                for flag in FLAG.findall(word):
                    yield owner, flag


def _module_commands() -> dict[str, set[str]]:
    """Each command module's file name -> the commands it registers that run (`maintenance start`, not
    `maintenance`): a message there belongs to one of them."""
    found: dict[str, set[str]] = {}
    for _, name, _ in COMMAND_TABLE:
        module = importlib.import_module(f"sync.cli.{name}")
        top = argparse.ArgumentParser()
        module.register(top.add_subparsers())
        names = set(_commands(top))
        found[Path(str(module.__file__)).name] = {n for n in names if not any(o.startswith(f"{n} ") for o in names)}
    return found


def _texts(path: Path) -> Iterator[tuple[int, str]]:
    """The string literals of a module (f-strings with their fields as {}), without its docstrings."""
    tree = ast.parse(path.read_text())
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
        and node.body
        and isinstance(node.body[0], ast.Expr)
    }
    parts = {id(v) for node in ast.walk(tree) if isinstance(node, ast.JoinedStr) for v in node.values}
    for node in ast.walk(tree):
        if id(node) in docstrings or id(node) in parts:  # an f-string's pieces are read with it
            continue
        if isinstance(node, ast.JoinedStr):
            yield node.lineno, "".join(str(v.value) if isinstance(v, ast.Constant) else "{}" for v in node.values)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and not LONE.fullmatch(node.value):
            # A lone option is an option's declaration or an argument of a program run, not a message.
            yield node.lineno, node.value


def _mistakes_in_source() -> list[str]:
    by_module = _module_commands()
    anywhere = set().union(*COMMANDS.values())
    wrong = []
    for path in sorted((ROOT / "sync").rglob("*.py")):
        running = by_module.get(path.name) if path.parent.name == "cli" else None
        for line, text in _texts(path):
            for owner, flag in named(text, None):
                owners = {owner} if owner is not None else running or set()
                if owners and not any(flag in COMMANDS[o] for o in owners):
                    wrong.append(f"{path.relative_to(ROOT)}:{line}: {flag} is no option of obs {'/'.join(owners)}")
                elif not owners and flag not in anywhere:
                    wrong.append(f"{path.relative_to(ROOT)}:{line}: {flag} is no option of any obs command")
    return wrong


def test_the_reader_finds_options_and_their_commands() -> None:
    text = (
        "export the keys, or see it with obs plan --env prod --offline; "
        "aws sqs set-queue-attributes --queue-url x --attributes y, or add --offline"
    )
    assert list(named(text, "sync")) == [("plan", "--env"), ("plan", "--offline"), ("sync", "--offline")]
    assert list(named("run obs maintenance end --env prod --queue q", None)) == [
        ("maintenance end", "--env"),
        ("maintenance end", "--queue"),
    ]


def test_the_source_check_finds_a_wrong_hint() -> None:
    """The check itself can fail: a hint that names another command's option is caught."""
    assert [flag for owner, flag in named("or add --offline", "sync") if flag not in COMMANDS[owner or ""]] == [
        "--offline"
    ]


def test_every_option_a_message_names_exists_where_it_is_named() -> None:
    assert _mistakes_in_source() == []


# Commands run into the errors a first run meets; each is run without Datadog keys, so those needing them fail.
RUNS = [
    ("plan", ["plan", "--env", "prod"]),
    ("sync", ["sync", "--env", "prod", "--dry-run"]),
    ("sync", ["sync", "--env", "prod", "--yes"]),
    ("links", ["links", "--env", "prod"]),
    ("maintenance list", ["maintenance", "list", "--env", "prod"]),
    ("maintenance start", ["maintenance", "start", "--env", "prod", "--queue", "critical", "--for", "1h"]),
    ("maintenance end", ["maintenance", "end", "--env", "prod", "--queue", "critical"]),
    ("plan", ["plan", "--env", "prd", "--offline"]),
    ("plan", ["plan", "--env", "prod", "--offline", "--out", "plan.json"]),
    ("trace", ["trace", "--topic", "payment-events"]),
    ("sync", ["sync", "--env", "prod", "--plan", "no-such-plan.json"]),
]


@pytest.mark.parametrize(("command", "argv"), RUNS, ids=[" ".join(argv) for _, argv in RUNS])
def test_hints_name_only_options_of_the_command_run(
    command: str, argv: list[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for name in ("DD_API_KEY", "DD_APP_KEY", "DD_SITE", "DD_HOST"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(tmp_path)
    assert main(["--definitions", str(JOBS), *argv]) == 1
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "Traceback" not in err
    wrong = [(owner, flag) for owner, flag in named(err, command) if flag not in COMMANDS[owner or command]]
    assert wrong == [], err
