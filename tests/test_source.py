"""The YAML reader: what YAML allows silently is refused, what YAML means is kept."""

from __future__ import annotations

import pytest

from sync.definitions.source import parse
from sync.errors import ObsError


def test_lines_are_recorded_per_key_path() -> None:
    source = parse("a: 1\nb:\n  - x: 2\n    y: 3\n", "f.yaml")
    assert source.data == {"a": 1, "b": [{"x": 2, "y": 3}]}
    assert source.line_of(("b", 0, "y")) == 4
    assert source.line_of(("b", 0, "missing")) == 3


def test_merge_keys_let_the_mapping_override_what_it_merges() -> None:
    text = "base: &w {cluster: jobs, service: a, min_tasks: 1}\nq:\n  <<: *w\n  service: b\n"
    assert parse(text, "f.yaml").data["q"] == {"cluster": "jobs", "service": "b", "min_tasks": 1}


def test_merge_list_earlier_wins_as_yaml_says() -> None:
    text = "a: &a {x: 1}\nb: &b {x: 2, y: 2}\nc:\n  <<: [*a, *b]\n"
    assert parse(text, "f.yaml").data["c"] == {"x": 1, "y": 2}


def test_an_explicit_duplicate_is_refused_even_next_to_a_merge() -> None:
    with pytest.raises(ObsError, match=r"f.yaml:5: q.service: duplicate key 'service' \(first on line 4\)"):
        parse("base: &w {service: a}\nq:\n  <<: *w\n  service: b\n  service: c\n", "f.yaml")


def test_an_alias_bomb_is_refused_quickly() -> None:
    rows = ["a: &a [1, 1, 1, 1, 1, 1, 1, 1, 1, 1]"]
    for this, prev in zip("bcdefg", "abcdef", strict=True):
        rows.append(f"{this}: &{this} [" + ", ".join([f"*{prev}"] * 10) + "]")
    with pytest.raises(ObsError, match="expands to more than"):
        parse("\n".join(rows) + "\n", "f.yaml")


def test_non_text_keys_are_refused() -> None:
    with pytest.raises(ObsError, match="key 1 is not text"):
        parse("1: x\n", "f.yaml")


def test_a_recursive_alias_is_refused_with_its_line() -> None:
    with pytest.raises(ObsError, match=r"f.yaml:2: a.b\[0\]: a YAML alias refers to a list or mapping that contains"):
        parse("x: 1\na: &a {b: [*a]}\n", "f.yaml")


@pytest.mark.parametrize("opening", ["[" * 300, "{k: " * 300])
def test_nesting_hundreds_of_levels_deep_is_refused(opening: str) -> None:
    closing = opening.replace("[", "]").replace("{k: ", "}")
    with pytest.raises(ObsError, match=r"f.yaml:1: .*nest more than 64 levels deep"):
        parse(f"a: {opening}1{closing}\n", "f.yaml")


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (".nan", r"f.yaml:1: a: .nan is not a finite number"),
        ("-.inf", r"f.yaml:1: a: -.inf is not a finite number"),
        ("1.0e+400", r"f.yaml:1: a: 1.0e\+400 is not a finite number"),
        ("9" * 400, r"f.yaml:1: a: the number 9{20}\.\.\. is too large"),
        ("1.0e+300", r"f.yaml:1: a: the number 1.0e\+300 is too large"),
    ],
)
def test_numbers_must_be_finite_and_exact_as_json(value: str, message: str) -> None:
    with pytest.raises(ObsError, match=message):
        parse(f"a: {value}\n", "f.yaml")


def test_a_list_as_a_key_is_refused() -> None:
    with pytest.raises(ObsError, match=r"f.yaml:1: a key is a list or mapping"):
        parse("? [a]\n: 1\n", "f.yaml")
