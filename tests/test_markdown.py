"""Markdown escaping: whatever definitions hold, markdown outputs keep their shape and mention nobody.

A CommonMark parser with GitHub's table rule is the judge of shape; GitHub's own rule for mentions
(an @ followed by a name character, in text outside code, pre and links) is the judge of mentions.
"""

from __future__ import annotations

import html
import os
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt
from markdown_it.token import Token

from sync.cli.app import main
from sync.report import markdown as md
from tests.conftest import commit, git
from tests.test_diff import edit

PARSER = MarkdownIt("commonmark").enable("table")
MENTION = re.compile(r"@[A-Za-z0-9]")


# What definitions could hold: markdown and HTML specials, handles, entities, line breaks, list marks.
def _pieces(*pieces: str) -> st.SearchStrategy[str]:
    return st.lists(st.sampled_from(pieces)).map("".join)


AWKWARD = _pieces(*"ab1 @-+|`<>*_[]()#!~\\&;:.=\n\r\t", "@oncall-team", "```", "<b>", "&amp;", "é")
LINE = _pieces(*"ab @|`~<>\\ ", "```", "~~~", "@alice")


def live_mentions(markdown: str) -> list[str]:
    """Every @name GitHub would turn into a mention: in text outside code spans, code blocks and links."""
    found: list[str] = []
    for block in PARSER.parse(markdown):
        if block.type in {"html_block", "html_inline"}:
            found += _in_html(block.content)
        found += _in_inline(block.children or [])
    return found


def _in_inline(children: list[Token]) -> list[str]:
    found: list[str] = []
    run, in_link = "", 0
    for token in children:
        in_link += {"link_open": 1, "link_close": -1}.get(token.type, 0)
        if token.type in {"text", "softbreak"} and not in_link:
            run += token.content or "\n"  # one text node until another element starts
            continue
        found += MENTION.findall(run)
        run = ""
        if token.type == "html_inline":
            found += _in_html(token.content)
    return found + MENTION.findall(run)


def _in_html(raw: str) -> list[str]:
    outside_code = re.sub(r"<code>.*?</code>", "", raw, flags=re.DOTALL)
    return MENTION.findall(html.unescape(re.sub(r"<[^>]*>", "", outside_code)))


def inline(markdown: str) -> list[Token]:
    """The inline tokens of a one-paragraph document, whichever block holds the paragraph."""
    blocks = [b for b in PARSER.parse(markdown) if b.type == "inline"]
    assert len(blocks) == 1, markdown
    return blocks[0].children or []


def shown(value: str) -> str:
    """What a reader sees of escaped text: the text on one line, a zero-width space after every @ and
    after every # before a digit."""
    return re.sub(r"#(?=\d)", "#\u200b", " ".join(value.split())).replace("@", "@\u200b")


def one_line(value: str) -> str:
    return re.sub(r"\r\n|\r|\n", " ", value) or " "


@given(AWKWARD)
def test_a_code_span_holds_any_text_whole(value: str) -> None:
    children = inline(f"- **update** {md.code(value)} → {md.code(value)}")
    spans = [t.content for t in children if t.type == "code_inline"]
    assert spans == [one_line(value), one_line(value)], "a code span closed early or never closed"
    assert not live_mentions(md.code(value))


@given(AWKWARD)
def test_text_reads_as_itself_and_mentions_nobody(value: str) -> None:
    for markdown in (f"- {md.text(value)}: missing", f"### {md.text(value)}", f"- **create** `k` {md.text(value)}"):
        children = inline(markdown)
        assert [t.type for t in children if t.type not in {"text", "strong_open", "strong_close", "code_inline"}] == []
        texts = "".join(t.content for t in children if t.type == "text")
        assert shown(value) in texts, markdown
        assert not live_mentions(markdown)
        assert "\n" not in md.text(value)


@given(AWKWARD, AWKWARD)
def test_a_table_cell_never_holds_an_unescaped_pipe(left: str, right: str) -> None:
    cells = (md.cell(md.code(left)), md.cell(md.text(right)))
    for escaped in cells:
        assert re.search(r"(?<!\\)\|", escaped) is None
    table = PARSER.parse(f"| a | b |\n|---|---|\n| {' | '.join(cells)} |\n")
    row = [t for t in table if t.type == "inline"][2:]
    assert len(row) == 2, "a pipe split the row into more cells"
    assert [t.content for t in row[0].children or [] if t.type == "code_inline"] == [one_line(left)]
    assert "".join(t.content for t in row[1].children or [] if t.type == "text") == shown(right)


def test_code_spans_keep_edge_backticks_and_spaces() -> None:
    assert md.code("prod") == "`prod`"
    assert md.code("a`b") == "``a`b``"
    assert md.code("`x`") == "`` `x` ``"
    assert md.code(" x ") == "`  x  `"
    assert md.code("  ") == "`  `"
    assert md.code("") == "` `"


@settings(max_examples=50)
@given(st.lists(LINE, max_size=6), st.sampled_from(["", "diff"]))
def test_a_fence_is_longer_than_any_inside(lines: list[str], info: str) -> None:
    blocks = [b for b in PARSER.parse("\n".join(md.fence(lines, info)) + "\n\nafter") if b.type == "fence"]
    assert len(blocks) == 1
    assert blocks[0].info == info
    assert blocks[0].content == "".join(f"{line}\n" for line in lines)


@given(AWKWARD, _pieces(*"ab/ ()<>\\\n&?=#", "@oncall-team"))
def test_a_link_ends_where_it_should(label: str, path: str) -> None:
    children = inline(f"- {md.link(label, 'https://example.com/' + path)}")
    assert [t.type for t in children if t.type != "text"] == ["link_open", "link_close"]
    assert children[0].type == "link_open", "text before the link: its label or URL broke out"
    assert children[-1].type == "link_close", "text after the link: its URL ended early"


def test_text_keeps_line_starts_and_html_inert() -> None:
    assert md.text("1. first") == "1\\. first"
    assert md.text("- item") == "\\- item"
    assert md.text("queue #12") == "queue \\#&#8203;12", "GitHub would link issue 12 and note it there"
    assert md.text("<b>@x</b> | *y*") == "\\<b\\>@&#8203;x\\</b\\> \\| \\*y\\*"
    assert md.html_code("a<b> & @c") == "<code>a&lt;b&gt; &amp; @c</code>"


def test_the_judge_sees_the_mentions_github_makes() -> None:
    assert live_mentions("ping @alice and `@bob`") == ["@a"]
    assert live_mentions("`a` @carol `b`") == ["@c"]
    assert live_mentions("&#64;dave") == ["@d"], "GitHub decodes entities before it looks for mentions"
    assert live_mentions("<summary><code>@x</code> @erin</summary>") == ["@e"]
    assert live_mentions("[@frank](https://x)\n\n```\n@g\n```") == []
    assert live_mentions("`a` ```\n@h\n```") == ["@h"], "a fence opening mid-paragraph ends it"


HANDLES = "Ask @oncall-team in `#jobs` or run ``obs trace`` `` ` `` then page @oncall-team | @lead"


@pytest.fixture
def handles_repo(example_copy: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """The example as one commit, then a DLQ monitor whose title and message hold backticks and handles."""
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", os.devnull)
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    monkeypatch.setenv("HOME", str(tmp_path))
    git(example_copy, "init", "-q")
    commit(example_copy, "base")
    edit(example_copy, "monitors/dlq.yaml", "title: messages in the dead-letter queue", f"title: '{HANDLES}'")
    edit(example_copy, "monitors/dlq.yaml", "  Find the error", f"  {HANDLES}\n  Find the error")
    return example_copy


@pytest.mark.parametrize(
    "command",
    [
        ["plan", "--env", "prod", "--offline", "--format", "markdown"],
        ["diff", "--base", "HEAD", "--format", "markdown"],
        ["links", "--env", "prod", "--offline", "--format", "markdown"],
    ],
)
def test_no_markdown_output_mentions_the_handles_in_definitions(
    handles_repo: Path, command: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["--definitions", str(handles_repo), *command]) in {0, 2}
    out = capsys.readouterr().out
    assert "oncall-team" in out, "the edited monitor is not in the output: the test would prove nothing"
    assert live_mentions(out) == []
