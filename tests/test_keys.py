"""A resource key as a value: its forms read back as their named parts, and text that is no key reads as None."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sync.core.keys import Key, env_of, key

# Parts as obs writes them and as an edited marker might hold them: no space and no slash, dots allowed.
parts = st.text(st.characters(exclude_categories=["Cs"]), min_size=1, max_size=12).filter(
    lambda p: "/" not in p and not any(c.isspace() for c in p)
)
dotless = parts.filter(lambda p: "." not in p)


@pytest.mark.parametrize(
    ("text", "env", "queue", "metric", "topic", "window", "name"),
    [
        ("prod/overview", "prod", None, None, None, None, "overview"),
        ("prod/critical/age", "prod", "critical", "age", None, None, "age"),
        ("prod/critical/age/orders", "prod", "critical", "age", "orders", None, "orders"),
        ("prod/critical/slo-fresh", "prod", "critical", "slo-fresh", None, None, "slo-fresh"),
        ("prod/critical/age/maintenance/nightly", "prod", "critical", "age", None, "nightly", "nightly"),
        ("prod/critical/slo/maintenance/nightly", "prod", "critical", "slo", None, "nightly", "nightly"),
        ("prod/critical/age/other/nightly", "prod", "critical", "age", None, None, "nightly"),
        ("prod", "prod", None, None, None, None, "prod"),
    ],
)
def test_every_form_reads_as_its_parts(
    text: str, env: str, queue: str | None, metric: str | None, topic: str | None, window: str | None, name: str
) -> None:
    found = Key.parse(text)
    assert found is not None
    assert (found.env, found.queue, found.metric, found.topic, found.window, found.name) == (
        env,
        queue,
        metric,
        topic,
        window,
        name,
    )
    assert str(found) == text
    assert found.maintenance == (None if window is None else (queue, metric, window))


@pytest.mark.parametrize(
    "text", ["", "/", "prod/", "/prod", "prod//age", "prod/critical age", "prod/\tage", "prod/age\n", " prod"]
)
def test_text_that_is_no_key_reads_as_none(text: str) -> None:
    assert Key.parse(text) is None
    with pytest.raises(ValueError, match="not a resource key"):
        Key.of(text)


@pytest.mark.parametrize("bad", [(), ("",), ("prod", "a/b"), ("prod", "a b")])
def test_a_key_cannot_be_made_of_bad_parts(bad: tuple[str, ...]) -> None:
    with pytest.raises(ValueError, match="not a resource key"):
        Key(bad)


def test_parent_child_and_file_stem() -> None:
    monitor = key("prod", "critical", "age")
    assert monitor == Key.of("prod/critical/age")
    assert str(monitor.parent) == "prod/critical"
    assert str(monitor.child("orders")) == "prod/critical/age/orders"
    assert key("prod").parent is None
    assert monitor.file_stem == "prod.critical.age"
    assert Key.from_file_stem("prod.critical.age") == monitor


def test_env_of_reads_a_key_that_does_not_parse() -> None:
    assert env_of("prod//age") == "prod"
    assert env_of("prod") == "prod"
    assert Key.parse("prod//age") is None


@given(st.lists(parts, min_size=1, max_size=6))
def test_str_and_parse_round_trip(found: list[str]) -> None:
    made = Key(tuple(found))
    assert Key.parse(str(made)) == made
    assert str(Key.of(str(made))) == "/".join(found)
    assert made.env == found[0] == env_of(str(made))
    assert made.name == found[-1]


@given(st.lists(dotless, min_size=1, max_size=6))
def test_file_stem_round_trips_without_dots(found: list[str]) -> None:
    made = Key(tuple(found))
    assert "/" not in made.file_stem
    assert Key.from_file_stem(made.file_stem) == made


@given(st.text(max_size=30))
def test_parse_never_raises_and_reads_back_exactly(text: str) -> None:
    found = Key.parse(text)
    assert found is None or str(found) == text


@given(parts, parts, parts, parts)
def test_the_window_forms_name_their_window(env: str, queue: str, metric: str, window: str) -> None:
    downtime = Key.of(f"{env}/{queue}/{metric}/maintenance/{window}")
    assert (downtime.env, downtime.queue, downtime.metric, downtime.window) == (env, queue, metric, window)
    assert downtime.topic is None
    assert downtime.maintenance == (queue, metric, window)
    topic = Key.of(f"{env}/{queue}/{metric}/{window}")
    assert (topic.topic, topic.window) == (window, None)
