"""Pure: the one way every markdown output escapes what comes from definitions or the live org.

Anything shown from outside obs (names, messages, keys, URLs) goes through one of these, so a backtick
cannot close a code span early, a pipe cannot split a table row, HTML stays text, and an `@handle` in a
monitor message never notifies anyone when the markdown is posted to GitHub.
"""

from __future__ import annotations

import html
import re
from collections.abc import Sequence

# GitHub finds mentions in the rendered text, after entities are decoded, so `&#64;` or `\@` still
# notify; a zero-width space right after the @ (as release-note bots on GitHub do) breaks the pattern.
_UNMENTIONED = "@&#8203;"
_ISSUE_REFERENCE = re.compile(r"\\#(?=\d)")  # #12 links issue 12 and leaves a note on it; the same space stops it
_SPECIAL = re.compile(r"([\\`*_\[\]<>|#~!])")
# At the start of a line, these open a list, a heading or a rule; escaping the mark keeps them text.
_BLOCK_START = re.compile(r"^(?:\d+(?=[.)])|(?=[-+]))")
_TICKS = re.compile(r"`+")
_LINE_BREAK = re.compile(r"\r\n|\r|\n")
# Characters that end or break a bare link destination; the <...> form holds them.
_UNSAFE_URL = re.compile(r"[\s()<>\\]")
_IN_BRACKETS = str.maketrans({"<": "%3C", ">": "%3E", "\n": "%0A", "\r": "%0D"})


def code(value: str) -> str:
    """An inline code span that holds any text on one line: its backtick run is longer than any inside."""
    value = _LINE_BREAK.sub(" ", value)  # a line break could end the paragraph; a code span shows it as a space
    if not value:
        return "` `"
    ticks = "`" * (longest_run([value]) + 1)
    # Markdown strips one space from each end when both are there; padding keeps edge backticks and spaces.
    edge_spaces = value.startswith(" ") and value.endswith(" ") and value.strip(" ")
    padded = f" {value} " if value.startswith("`") or value.endswith("`") or edge_spaces else value
    return f"{ticks}{padded}{ticks}"


def text(value: str) -> str:
    """Plain text on one line that markdown and HTML leave as it is and that mentions nobody."""
    escaped = _SPECIAL.sub(r"\\\1", " ".join(value.split())).replace("&", "&amp;")
    escaped = _BLOCK_START.sub(lambda start: start[0] + "\\", escaped, count=1)
    return _ISSUE_REFERENCE.sub(r"\\#&#8203;", escaped).replace("@", _UNMENTIONED)


def cell(value: str) -> str:
    """A table cell: GitHub splits cells at every pipe not after a backslash, even inside code spans,
    and takes one backslash off each escaped pipe before it reads the cell, so this is exact."""
    return value.replace("|", "\\|")


def link(label: str, url: str) -> str:
    """A link whose label is text and whose destination a space, a parenthesis or a `>` cannot end early."""
    if _UNSAFE_URL.search(url):
        url = (
            url.replace("\\", "\\\\").replace("<", "%3C").replace(">", "%3E").replace("\n", "%0A").replace("\r", "%0D")
        )
        url = f"<{url}>"
    return f"[{text(label)}]({url})"


def fence(lines: Sequence[str], info: str = "") -> list[str]:
    """A fenced code block whose fence is longer than any backtick run inside, so nothing closes it early."""
    ticks = "`" * max(3, longest_run(lines) + 1)
    return [f"{ticks}{info}", *lines, ticks]


def html_code(value: str) -> str:
    """Inline code inside raw HTML (a `<summary>`), where markdown is not read and entities are."""
    return f"<code>{html.escape(' '.join(value.split()))}</code>"


def longest_run(lines: Sequence[str]) -> int:
    return max((len(run) for line in lines for run in _TICKS.findall(line)), default=0)
