"""Mutated definitions (the test catalogue's) never crash obs validate: exit 0 or 1, never an internal error,
never a hang, and every error names the file it is about."""

from __future__ import annotations

import contextlib
import io
import re
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


def _validate(edits: dict[str, str]) -> tuple[int, str]:
    """obs validate on a copy of the test catalogue with these files' texts replaced: exit code and stderr."""
    with tempfile.TemporaryDirectory() as tmp:
        defs = Path(tmp)
        for part in DEFINITION_PARTS:
            source = JOBS / part
            (shutil.copytree if source.is_dir() else shutil.copy)(source, defs / part)
        for file, text in edits.items():
            (defs / file).write_text(text)
        err = io.StringIO()
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
            code = main(["--definitions", str(defs), "validate"])
    return code, err.getvalue()


# Mistakes a user makes, each in a file of its own and independent of the others: alone, each is the one
# problem reported, at this place. Schema, reference and per-file checks are all among them.
MISTAKES = {
    "queues.yaml": ("    class: long\n", "    class: lnog\n", "queues.yaml:64: queues[3].class: unknown class 'lnog'"),
    "environments/staging.yaml": (
        "  critical:\n",
        "  crtical:\n",
        "environments/staging.yaml:18: queues.crtical: unknown queue 'crtical'",
    ),
    "environments/prod.yaml": (
        "region: us-east-1",
        "region: us-eats-1",
        "environments/prod.yaml:3: aws.region: unknown AWS region 'us-eats-1'",
    ),
    "environments/dev.yaml": (
        "  worker_cpu: {enabled: false}",
        "  worker_cpuu: {enabled: false}",
        "environments/dev.yaml:20: metrics.worker_cpuu: unknown metric 'worker_cpuu'",
    ),
    "monitors/age.yaml": (
        "{queuename:[[queue_name]],[[aws_scope]]}",
        "{queuename:[[queue_nmae]],[[aws_scope]]}",
        "monitors/age.yaml:11: query: unknown template token [[queue_nmae]]",
    ),
    "monitors/worker_cpu.yaml": (
        "title: worker CPU high",
        'title: "worker CPU high on [[servce]]"',
        "monitors/worker_cpu.yaml:5: title: unknown template token [[servce]]",
    ),
    "monitors/in_flight.yaml": (
        "> [[critical]]",
        "> 96000",
        "monitors/in_flight.yaml:7: query: the query must end with a comparator and [[critical]]",
    ),
    "monitors/depth.yaml": (
        "thresholds: {critical: 10000",
        "threshods: {critical: 10000",
        "monitors/depth.yaml:9: threshods: unknown key 'threshods'",
    ),
    "monitors/dlq.yaml": (
        "notify: {alert: chat}",
        "notify: {alert: pager}",
        "monitors/dlq.yaml:12: notify.alert: audience 'pager' is not declared",
    ),
    "monitors/consumers_stuck.yaml": (
        "[[metric:deletes_none]]",
        "[[metric:deletes_nope]]",
        "monitors/consumers_stuck.yaml:9: composite: unknown metric 'deletes_nope'",
    ),
    "dashboards/oncall.yaml": (
        'available_values: "[[queue_names]]"',
        'available_values: "[[queue_nams]]"',
        "dashboards/oncall.yaml:13: template_variables[0].available_values: unknown template token [[queue_nams]]",
    ),
}


def _problem_lines(err: str) -> list[str]:
    """The problems of an error, one a line, without the note on what was not checked and the count at the end."""
    *lines, count = err.removeprefix("error: ").splitlines()
    assert re.fullmatch(r"\d+ problems?( in \d+ files?)?", count), err
    return [line for line in lines if not line.startswith("note: ")]


def _place(line: str) -> tuple[str, int]:
    file, _, rest = line.partition(":")
    return file, int(rest.split(":", 1)[0])


@settings(max_examples=25, deadline=20_000, derandomize=True, database=None)
@given(chosen=st.lists(st.sampled_from(sorted(MISTAKES)), min_size=2, max_size=len(MISTAKES), unique=True))
def test_independent_mistakes_in_many_files_are_all_reported_in_one_run(chosen: list[str]) -> None:
    edits = {}
    for file in chosen:
        find, replace, _ = MISTAKES[file]
        text = (JOBS / file).read_text()
        assert find in text, f"the snippet to replace is no longer in {file}"
        edits[file] = text.replace(find, replace, 1)
    code, err = _validate(edits)
    assert code == 1, err
    assert err.startswith("error: ") and "Traceback" not in err and "internal error" not in err, err
    lines = _problem_lines(err)
    assert len(lines) == len(chosen), err
    for line, file in zip(lines, sorted(chosen, key=lambda f: _place(MISTAKES[f][2])), strict=True):
        assert line.startswith(MISTAKES[file][2]), err
    assert [_place(line) for line in lines] == sorted(_place(line) for line in lines)


def test_every_mistake_alone_is_the_one_problem_reported() -> None:
    """What the test above combines: each mistake alone gives exactly its own problem."""
    for file, (find, replace, expected) in MISTAKES.items():
        code, err = _validate({file: (JOBS / file).read_text().replace(find, replace, 1)})
        assert code == 1 and _problem_lines(err) == [_problem_lines(err)[0]], err
        assert _problem_lines(err)[0].startswith(expected), err


@settings(
    max_examples=30,
    deadline=30_000,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    derandomize=True,
    database=None,
)
@given(data=st.data())
def test_mutations_of_many_files_at_once_never_crash(data: st.DataObject) -> None:
    """Every check runs even when others failed: mutations in several files at once still give clear errors,
    each naming its file, or pass."""
    files = data.draw(st.lists(st.sampled_from(FILES), min_size=2, max_size=5, unique=True), label="files")
    edits = {}
    for file in files:
        loaded = yaml.safe_load((JOBS / file).read_text())
        path = data.draw(st.sampled_from(_paths(loaded)), label="path")
        how = data.draw(st.sampled_from(["replace", "delete", "rename", "wrap", "retype"]), label="how")
        value = data.draw(ODD_VALUES, label="value")
        edits[file] = yaml.safe_dump(_mutate(loaded, path, how, value), allow_unicode=True, sort_keys=False)
    code, err = _validate(edits)
    assert code in (0, 1), err
    assert "internal error" not in err and "Traceback" not in err, err
    if code == 1:
        assert err.startswith("error: "), err
        for line in _problem_lines(err):
            assert any(line.startswith(f) for f in FILES) or line.startswith(("no ", "lists and")), line
