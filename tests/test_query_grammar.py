"""One grammar for metric monitor queries and one for composite queries: what one reader accepts the others
read the same way."""

from __future__ import annotations

import re
from functools import cache

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sync.core import composite_query, metric_query
from sync.core.composite_query import Expr, Not, Op, Ref
from sync.core.evaluation import composite
from sync.core.evaluation.notes import Refused
from sync.core.evaluation.query import parse
from sync.core.metric_query import BinOp, Call, Leaf, Node, Number
from sync.definitions.query import problems

_NAME = st.from_regex(r"[a-z][a-z0-9_]{0,8}", fullmatch=True)
_METRIC_NAME = st.from_regex(r"[a-z][a-z0-9_]{0,6}(\.[a-z][a-z0-9_]{0,6}){0,3}", fullmatch=True)
_WINDOWS = st.sampled_from([(1, "m"), (5, "m"), (10080, "m"), (1, "h"), (168, "h"), (1, "d"), (1, "w")])
Written = tuple[str, Node]


@st.composite
def _leaf(draw: st.DrawFn, modifiers: tuple[str, ...]) -> Written:
    space, metric = draw(st.sampled_from(metric_query.AGGREGATORS)), draw(_METRIC_NAME)
    tags = draw(st.dictionaries(_NAME, _NAME, max_size=3))
    modifier = draw(st.sampled_from(modifiers))
    filters = ",".join(f"{k}:{v}" for k, v in tags.items()) or "*"
    text = f"{space}:{metric}{{{filters}}}" + (f".{modifier}()" if modifier else "")
    return text, Leaf(space, metric, tuple(sorted(tags.items())), modifier)


def _number() -> st.SearchStrategy[Written]:
    return st.integers(0, 10**6).map(lambda n: (str(n), Number(float(n))))


def _combined(children: st.SearchStrategy[Written]) -> st.SearchStrategy[Written]:
    binop = st.tuples(st.sampled_from("+-*/"), children, children).map(
        lambda t: (f"({t[1][0]}) {t[0]} ({t[2][0]})", BinOp(t[0], t[1][1], t[2][1]))
    )
    clamp = st.tuples(st.sampled_from(["clamp_min", "clamp_max"]), children, st.integers(0, 99)).map(
        lambda t: (f"{t[0]}({t[1][0]}, {t[2]})", Call(t[0], t[1][1], (float(t[2]),)))
    )
    plain = st.tuples(st.sampled_from(["default_zero", "abs"]), children).map(
        lambda t: (f"{t[0]}({t[1][0]})", Call(t[0], t[1][1], ()))
    )
    return binop | clamp | plain


@cache  # one strategy per set of modifiers: a strategy built anew in each draw is validated anew, at length
def _expressions(modifiers: tuple[str, ...]) -> st.SearchStrategy[Written]:
    return st.recursive(_leaf(modifiers) | _number(), _combined, max_leaves=6)


@st.composite
def _queries(draw: st.DrawFn, loose: bool = False) -> tuple[str, metric_query.Window, Node, str, float]:
    """Queries the check accepts; `loose` ones also break its own rules (window ranges, .as_count())."""
    aggregator = draw(st.sampled_from(metric_query.AGGREGATORS))
    # .as_count() goes with the sum time aggregator only: the definitions' check refuses the rest
    modifiers = ("", "as_count", "as_rate") if aggregator == "sum" or loose else ("", "as_rate")
    count, unit = draw(st.tuples(st.integers(0, 20000), st.sampled_from("mhdw")) if loose else _WINDOWS)
    text, node = draw(_expressions(modifiers))
    comparator, threshold = draw(st.sampled_from(metric_query.COMPARATORS)), draw(st.integers(-99, 10**5))
    query = f"{aggregator}(last_{count}{unit}):{text} {comparator} {threshold}"
    return query, metric_query.Window(count, unit), node, comparator, float(threshold)


@settings(max_examples=200)
@given(_queries())
def test_a_query_written_from_the_grammar_reads_back_as_its_tree_in_the_check_and_the_model(
    written: tuple[str, metric_query.Window, Node, str, float],
) -> None:
    text, window, node, comparator, threshold = written
    assert problems(text) == []
    query = parse(text)
    assert (query.window, query.unit, query.expression) == (window.minutes, window.unit, node)
    assert (query.comparator, query.threshold) == (comparator, threshold)


_POLICY = ("out of range", ".as_count() under")  # the check's own rules, beyond the grammar


@settings(max_examples=300)
@given(_queries(loose=True), st.integers(0, 400), st.integers(0, 2), st.sampled_from(list("(){}[],:.*+-/ <>=!_0a")))
def test_what_the_model_reads_the_check_accepts(
    written: tuple[str, metric_query.Window, Node, str, float], at: int, edit: int, char: str
) -> None:
    text = written[0]
    at %= len(text)
    edited = [text[:at] + text[at + 1 :], text[:at] + char + text[at:], text[:at] + char + text[at + 1 :]][edit]
    try:
        parse(edited)
    except Refused:
        return
    assert [p for p in problems(edited) if not any(rule in p for rule in _POLICY)] == []


def test_arithmetic_binds_as_written_and_the_forms_the_check_knows_have_one_head() -> None:
    node = metric_query.expression("sum:a{*} + 2 * sum:b{*}")
    a, b = Leaf("sum", "a", (), ""), Leaf("sum", "b", (), "")
    assert node == BinOp("+", a, BinOp("*", Number(2), b))
    change = metric_query.head("pct_change(avg(last_5m),1h_ago):sum:a{*} > 1")
    assert change is not None and change.form == "pct_change" and change.shift == metric_query.Window(1, "h", ago=True)
    forecast = metric_query.head("max(next_1w):forecast(max:a{*}, 'linear', 1) >= 1")
    assert forecast is not None and (forecast.form, forecast.window.minutes) == ("forecast", 10080)
    assert metric_query.head(" avg(last_5m):a{*} > 1") is None  # the head starts the query
    with pytest.raises(metric_query.QueryError, match=r"tag filter '!q:x' is not modelled"):
        metric_query.expression("max:a{!q:x}")


def _render(expr: Expr, operand: str) -> str:
    if isinstance(expr, Ref):
        return operand.format(expr.key)
    if isinstance(expr, Not):
        return f"!({_render(expr.arg, operand)})"
    return f"({_render(expr.left, operand)}) {expr.op} ({_render(expr.right, operand)})"


_EXPRS: st.SearchStrategy[Expr] = st.recursive(
    _NAME.map(Ref),
    lambda children: children.map(Not) | st.builds(Op, st.sampled_from(["&&", "||"]), children, children),
    max_leaves=8,
)


def _keyed(expr: Expr, prefix: str) -> Expr:
    if isinstance(expr, Ref):
        return Ref(prefix + expr.key)
    if isinstance(expr, Not):
        return Not(_keyed(expr.arg, prefix))
    return Op(expr.op, _keyed(expr.left, prefix), _keyed(expr.right, prefix))


@given(_EXPRS)
def test_a_composite_reads_the_same_in_the_definitions_after_expansion_and_in_the_model(expr: Expr) -> None:
    defined = _render(expr, "[[metric: {} ]]")
    assert composite_query.parse(defined, (composite_query.METRIC,)) == expr
    expanded = composite_query.substitute(defined, composite_query.METRIC, lambda n: f"${{monitor_id:prod/q/{n}}}")
    read = composite_query.parse(expanded, (composite_query.PLACEHOLDER,))
    assert read == _keyed(expr, "prod/q/")
    assert composite_query.names(defined, composite_query.METRIC) == list(composite_query.references(expr))
    if len(composite_query.references(expr)) <= composite_query.MOST_MONITORS:
        assert composite.parse(expanded) == read


@pytest.mark.parametrize(
    ("query", "operands", "message"),
    [
        ("[[metric:a]] & [[metric:b]]", (composite_query.METRIC,), "cannot read the composite query from ' & "),
        ("[[metric:a]] && ([[metric:b]]", (composite_query.METRIC,), "ends too early"),
        ("([[metric:a]] [[metric:b]])", (composite_query.METRIC,), "not closed"),
        ("12 && ${monitor_id:k}", (composite_query.METRIC,), "cannot read"),  # a definition names metrics only
        ("[[metric:a]]", (composite_query.PLACEHOLDER, composite_query.ID), "cannot read"),
        ("12 ||", (composite_query.ID,), "ends too early"),
        ("12 34", (composite_query.ID,), "unexpected '34'"),
    ],
)
def test_a_composite_that_does_not_parse_says_where(query: str, operands: tuple[str, ...], message: str) -> None:
    with pytest.raises(composite_query.CompositeError, match=re.escape(message)):
        composite_query.parse(query, operands)
