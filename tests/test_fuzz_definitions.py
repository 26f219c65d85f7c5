"""Mutated definitions (the test catalogue's) never crash obs validate: exit 0 or 1, never an internal error,
never a hang, and every error names the file it is about."""

from __future__ import annotations

import contextlib
import io
import shutil
import tempfile
from pathlib import Path
from typing import Any

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sync.cli.app import main

from .conftest import DEFINITION_PARTS, JOBS

FILES = sorted(
    str(p.relative_to(JOBS))
    for part in DEFINITION_PARTS
    for p in ([JOBS / part] if (JOBS / part).is_file() else sorted((JOBS / part).glob("*.yaml")))
)


def _deep(levels: int) -> Any:
    value: Any = 1
    for _ in range(levels):
        value = [value]
    return value


ODD_VALUES = st.one_of(
    st.sampled_from(
        [
            None,
            True,
            -1,
            0,
            10**400,
            2**63,
            -(10**30),
            1e308,
            float("nan"),
            float("inf"),
            -float("inf"),
            "",
            " ",
            "[[queue]]",
            "[[nope]]",
            "Prod-Queue",
            "a" * 300,
            "x\u200by",
            "\u00e9\u00e8",
            [],
            {},
            {"unexpected": 1},
            _deep(300),
        ]
    ),
    st.integers(),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=40),
)


def _paths(value: Any, at: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found = [at]
    if isinstance(value, dict):
        for key, item in value.items():
            found += _paths(item, (*at, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found += _paths(item, (*at, index))
    return found


def _mutate(data: Any, path: tuple[Any, ...], how: str, new: Any) -> Any:
    """One YAML-level mutation at `path`: replace the value, delete it, rename its key, or wrap it."""
    if not path:
        return new if how == "replace" else data
    parent = data
    for part in path[:-1]:
        parent = parent[part]
    last = path[-1]
    if how == "replace":
        parent[last] = new
    elif how == "delete":
        del parent[last]
    elif how == "rename" and isinstance(parent, dict):
        parent[f"{last}x"] = parent.pop(last)
    elif how == "wrap":
        parent[last] = [parent[last]]
    elif how == "retype":
        parent[last] = str(parent[last]) if not isinstance(parent[last], str) else 12
    return data


TEXT_EDITS = [
    lambda text: text + "\nextra: &a [*a]\n",  # a recursive alias
    lambda text: text.replace(":", ": &x [*x]\n#", 1),
    lambda text: text + "\n" + text.splitlines()[-1] + "\n",  # the last line twice: often a duplicate key
    lambda text: text.replace("\n", "\n\t", 1),
    lambda text: text[: len(text) // 2],
    lambda text: text + "\nnested: " + "[" * 200 + "]" * 200 + "\n",
]


@settings(
    max_examples=60,
    deadline=20_000,  # a hang fails the example instead of the run
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    derandomize=True,
    database=None,
)
@given(data=st.data())
def test_mutated_definitions_give_one_clear_error_or_pass(data: st.DataObject) -> None:
    file = data.draw(st.sampled_from(FILES), label="file")
    text = (JOBS / file).read_text()
    if data.draw(st.booleans(), label="text edit"):
        edit = data.draw(st.sampled_from(TEXT_EDITS), label="edit")
        mutated = edit(text)
    else:
        loaded = yaml.safe_load(text)
        path = data.draw(st.sampled_from(_paths(loaded)), label="path")
        how = data.draw(st.sampled_from(["replace", "delete", "rename", "wrap", "retype"]), label="how")
        value = data.draw(ODD_VALUES, label="value")
        mutated = yaml.safe_dump(_mutate(loaded, path, how, value), allow_unicode=True, sort_keys=False)

    with tempfile.TemporaryDirectory() as tmp:
        defs = Path(tmp)
        for part in DEFINITION_PARTS:
            source = JOBS / part
            (shutil.copytree if source.is_dir() else shutil.copy)(source, defs / part)
        (defs / file).write_text(mutated)
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(["--definitions", str(defs), "validate"])

    shown = err.getvalue()
    assert code in (0, 1), shown
    assert "internal error" not in shown and "Traceback" not in shown, shown
    if code == 1:
        assert shown.startswith("error: "), shown
        named = [f for f in FILES if f in shown]
        assert named, f"the error names no file: {shown}"
    else:
        assert out.getvalue().startswith("ok: "), out.getvalue()
