"""Every kind of bad input gets one clear message naming the file, the place and the fix; exit 1."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from sync.cli.app import main

from .conftest import JOBS

CASES = sorted((Path(__file__).parent / "fixtures" / "bad").iterdir())


def _apply(case: Path, defs: Path) -> None:
    """A case is one edit of the test catalogue: replace a snippet, or the whole file's text or bytes."""
    edit = yaml.safe_load((case / "case.yaml").read_text())
    target = defs / edit["file"]
    if "bytes" in edit:
        target.write_bytes(bytes.fromhex(edit["bytes"]))
    elif "content" in edit:
        target.write_text(edit["content"])
    else:
        text = target.read_text()
        assert edit["find"] in text, f"{case.name}: the snippet to replace is no longer in {edit['file']}"
        target.write_text(text.replace(edit["find"], edit["replace"], 1))


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_bad_input_is_one_clear_error(case: Path, example_copy: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _apply(case, example_copy)
    code = main(["--definitions", str(example_copy), "validate"])
    out, err = capsys.readouterr()
    assert code == 1
    assert out == ""
    assert err.startswith("error: ")
    assert "Traceback" not in err
    for expected in (case / "expected.txt").read_text().splitlines():
        assert expected in err


def test_there_are_at_least_fifteen_cases() -> None:
    assert len(CASES) >= 15


def test_unknown_environment_names_the_closest_and_the_known_ones(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--definitions", str(JOBS), "plan", "--env", "prd", "--offline"]) == 1
    assert "unknown environment 'prd': did you mean prod? use one of: dev, prod, staging" in capsys.readouterr().err
    assert main(["--definitions", str(JOBS), "plan", "--env", "qa", "--offline"]) == 1
    assert "unknown environment 'qa': use one of: dev, prod, staging" in capsys.readouterr().err


def test_missing_definitions_folder_says_how_to_point_at_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["--definitions", str(tmp_path), "validate"])
    assert code == 1
    assert "no queues.yaml" in capsys.readouterr().err


def test_a_folder_that_does_not_exist_is_named_so(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--definitions", str(tmp_path / "nowhere"), "validate"]) == 1
    assert f"error: no folder {tmp_path / 'nowhere'}: run obs from your definitions folder" in capsys.readouterr().err


def test_a_subfolder_of_the_definitions_points_to_them(example_copy: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--definitions", str(example_copy / "monitors"), "validate"]) == 1
    assert f"the definitions seem to be in {example_copy}: run obs there" in capsys.readouterr().err


def test_validate_reports_every_error_of_every_file_sorted_by_file_and_line(
    example_copy: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for file, find, replace in (
        ("monitors/depth.yaml", "priority: 3", "priority: 9"),
        ("environments/prod.yaml", "tags: [", "tagz: ["),
        ("monitors/age.yaml", "priority: 2", "priority: 0"),
    ):
        path = example_copy / file
        text = path.read_text()
        assert find in text
        path.write_text(text.replace(find, replace, 1))
    code = main(["--definitions", str(example_copy), "validate"])
    _, err = capsys.readouterr()
    assert code == 1 and "Traceback" not in err
    assert err.startswith("error: ")
    places = [line.removeprefix("error: ").split(": ")[0] for line in err.splitlines()[:-1]]
    assert places == ["environments/prod.yaml:14", "monitors/age.yaml:13", "monitors/depth.yaml:10", "note"]
    assert err.splitlines()[-2].startswith("note: what refers to a definition with errors was not checked")
    assert err.splitlines()[-1] == "3 problems in 3 files"  # the note is no problem of its own
