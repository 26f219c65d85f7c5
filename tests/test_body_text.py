"""The body text `obs render` writes is the standard library's, whichever library wrote it."""

from __future__ import annotations

import json
import math
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from sync.core.body_text import body_text

_LEAVES = st.none() | st.booleans() | st.integers(min_value=-(2**70), max_value=2**70) | st.floats() | st.text()
_VALUES = st.recursive(
    _LEAVES,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=12,
)


def _standard(body: Any) -> str:
    return json.dumps(body, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(st.text(max_size=8), _VALUES, max_size=6))
def test_every_body_is_written_as_the_standard_library_writes_it(body: dict[str, Any]) -> None:
    assert body_text(body) == _standard(body)


def test_the_cases_the_fast_library_writes_otherwise() -> None:
    for body in (
        {"threshold": 1e-05},
        {"threshold": 1e-07, "b": [1.5e300]},
        {"x": math.nan, "y": math.inf},
        {"big": 2**65},
        {"name": "ünïcode ✓", "null": None},
    ):
        assert body_text(body) == _standard(body)
    assert body_text({1: "int key"}) == _standard({1: "int key"})  # type: ignore[dict-item]
