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
