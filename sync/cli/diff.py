"""The `obs diff` command line: what a change of the definitions does in every environment, offline."""

from __future__ import annotations

import argparse
import shlex
import sys
from pathlib import Path

from sync.cli import colour, expanding
from sync.cli.conventions import SUMMARIES, Commands, Exit, detailed_exitcode_option, format_option
from sync.core.backtest.fetched import SOURCES
from sync.core.namespaces import NO_NAMESPACE, Ownership
from sync.definitions import maintenance
from sync.definitions.load import load
from sync.errors import ObsError, Problem
from sync.preview import comment, own_code, report, revision
from sync.preview.compare import WORKING_TREE, Preview, Rendered, compare, environments
from sync.preview.facts import EMPTY, Facts, read_facts
from sync.preview.notices import EMPTY_BASE, OBS_CODE, Notice
from sync.report import backtest as backtest_report


def register(commands: Commands) -> None:
    parser = commands.add_parser(
        "diff",
        help=SUMMARIES["diff"],
        description="Render the definitions of two git revisions and diff each environment's monitors and "
        "dashboards with the engine of `obs plan`, without credentials. The base is read from git; the working "
        f"tree is never touched. Exit {Exit.OK} with no changes, {Exit.CHANGES} with changes and "
        f"--detailed-exitcode, {Exit.ERROR} on error. When the change edits obs itself, the base revision's own "
        "code is executed to render the base (in a child process that gets PATH, HOME, TMPDIR and the locale, "
        "no credentials): give --base only a revision you trust, such as the merge base with main.",
    )
    parser.add_argument(
        "--base",
        required=True,
        metavar="REF",
        help="the revision to compare with, e.g. origin/main; its code is executed when the change edits obs",
    )
    parser.add_argument(
        "--base-label", metavar="NAME", help="what to call the base in the report, e.g. the base branch (default: REF)"
    )
    parser.add_argument("--head", metavar="REF", help="the revision to preview (default: the working tree)")
    parser.add_argument(
        "--base-definitions",
        metavar="PATH",
        help="the definitions folder's path in the base revision, from the repository root, when a change moved it",
    )
    parser.add_argument(
        "--env", action="append", default=[], metavar="ENV", help="only this environment (repeatable; default: all)"
    )
    parser.add_argument(
        "--backtest",
        action="append",
        default=[],
        metavar="ENV",
        help="also replay the base's and the head's monitors of ENV over its real metric history and say which "
        "incidents would no longer page and which pages are new, as `obs backtest --base` does (repeatable; needs "
        "read-only credentials for the source: cloudwatch:GetMetricData, or Datadog's timeseries_query)",
    )
    parser.add_argument(
        "--backtest-days", type=int, default=7, metavar="N", help="the history --backtest replays (default 7 days)"
    )
    parser.add_argument(
        "--backtest-source",
        choices=sorted(SOURCES),
        default="cloudwatch",
        help="where --backtest reads the history (default: cloudwatch)",
    )
    format_option(parser, help_text="markdown is made for a pull-request comment (default: text)")
    detailed_exitcode_option(parser, "anything changes")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    root: Path = args.definitions
    head_label = args.head or WORKING_TREE
    head, head_facts, ownership = _head(root, args.head)
    revision.repository_prefix(root)  # outside git, say so before naming a revision unknown
    base_commit = revision.resolve(root, args.base)
    head_commit = revision.commit_or_none(root, args.head or "HEAD") or ""
    said: list[Notice] = []
    base, base_facts = _base(root, args, base_commit, said)
    _no_new_window_over(root, args)
    envs = environments(args.env, base, head)
    found = compare(
        args.base_label or args.base,
        head_label,
        base,
        head,
        envs,
        base_facts=base_facts,
        head_facts=head_facts,
        base_commit=base_commit,
        head_commit=head_commit,
        said=said,
        ownership=ownership,
    )
    backtested = []
    if args.backtest:  # opt-in: reads metric history with credentials; the preview itself stays offline
        from sync.cli import diff_backtest  # noqa: PLC0415 (boto3 and the Datadog client load only when asked)

        backtested = [diff_backtest.outcome(root, args, env, base, head, base_commit) for env in args.backtest]
    sys.stdout.write(_render(found, args.format, _rerun(args), colour.enabled(args), backtested))
    return Exit.CHANGES if args.detailed_exitcode and found.pending else Exit.OK


def _head(root: Path, ref: str | None) -> tuple[Rendered, Facts, Ownership]:
    """The head must pass `obs validate`: a preview of definitions that cannot sync would mislead. Its
    namespace owns the objects the base renders, as it would own them live."""
    if ref is None:
        rendered, ownership = _validated(root)
        return rendered, read_facts(root), ownership
    with revision.checked_out(root, ref) as folder:
        try:
            rendered, ownership = _validated(folder)
            return rendered, read_facts(folder), ownership
        except ObsError as exc:
            raise _in_revision(exc, f"the head revision '{ref}' does not validate", "fix it there") from None


def _no_new_window_over(root: Path, args: argparse.Namespace) -> None:
    """Refuse a one-time window the head adds although it is over already (a past window the base has is fine)."""
    known: dict[str, set[str]] = {}
    if revision.defines(root, args.base, args.base_definitions):
        with revision.checked_out(root, args.base, args.base_definitions) as folder:
            known = maintenance.names_in(folder)
    if args.head is None:
        maintenance.refuse_new_and_over(load(root), known)
        return
    with revision.checked_out(root, args.head) as folder:
        maintenance.refuse_new_and_over(load(folder), known)


def _validated(folder: Path) -> tuple[Rendered, Ownership]:
    defs = load(folder)
    rendered = expanding.checked(defs, None, expanding.resources)
    return rendered, next((e.ownership for e in defs.environments), NO_NAMESPACE)


def _base(root: Path, args: argparse.Namespace, commit: str, said: list[Notice]) -> tuple[Rendered, Facts]:
    """The base only needs to load and expand: it passed validation when it was merged. A base from before
    obs was added has nothing, and the preview says so; a change to obs itself renders the base with the
    base's own code."""
    ref, inside = args.base, args.base_definitions
    if not revision.defines(root, ref, inside):
        said.append(Notice(EMPTY_BASE, "", f"the base revision {ref} has no definitions yet: everything is new."))
        return {}, EMPTY
    with revision.checked_out(root, ref, inside) as folder:
        facts = read_facts(folder)
        code = own_code.changed_files(root, commit, args.head)
        if code:
            return _base_by_own_code(root, commit, inside, code, folder, said), facts
        return _loaded(folder, ref), facts


def _loaded(folder: Path, ref: str) -> Rendered:
    try:
        return expanding.expand_all(load(folder))
    except ObsError as exc:
        what = f"the base revision '{ref}' does not load with this version of obs"
        raise _in_revision(exc, what, "compare with another revision, or fix the definitions there") from None


def _base_by_own_code(
    root: Path, commit: str, inside: str | None, code: list[str], folder: Path, said: list[Notice]
) -> Rendered:
    """This change edits obs itself: the base is rendered by its own code where that works, else the
    preview says loudly that it cannot show what the code change does."""
    rendered = own_code.render_with_own_code(root, commit, revision.prefix_of(root, inside))
    named = ", ".join(code[:3]) + (f" and {len(code) - 3} more" if len(code) > 3 else "")
    if rendered is not None:
        said.append(
            Notice(
                OBS_CODE,
                "",
                f"this change edits obs itself ({named}): the base was rendered by its own code, "
                "so changes of defaults and expansion show below.",
            )
        )
        return rendered
    fallback = _loaded(folder, commit[:12])
    said.append(
        Notice(
            OBS_CODE,
            "",
            f"this change edits obs itself ({named}), and the base could not be rendered by its own code: both "
            "sides were rendered by the head's code, so this preview CANNOT show what the code change does to "
            "monitors and dashboards (a changed default reads as no change). Run obs plan against each org.",
        )
    )
    return fallback


def _in_revision(exc: ObsError, what: str, fix: str) -> ObsError:
    """The revision's own problems, under one line that says which revision they are in."""
    return ObsError(Problem(what=what, fix=fix), *exc.problems, notes=exc.notes)


def _rerun(args: argparse.Namespace) -> str:
    """The command a reviewer runs for everything the comment left out."""
    folder: Path = args.definitions
    # A relative folder is the reviewer's too; an absolute one is the runner's, and stays out of the comment.
    where = ["--definitions", folder.as_posix()] if not folder.is_absolute() and folder != Path() else []
    words = ["obs", *where, "diff", "--base", args.base, *(["--head", args.head] if args.head else [])]
    return shlex.join(words)


def _render(found: Preview, fmt: str, rerun: str, coloured: bool, backtested: list[backtest_report.Outcome]) -> str:
    if fmt == "markdown":
        return comment.comment(found, rerun, backtest_report.diff_markdown(backtested, rerun))
    if fmt == "json":
        return report.as_json(found, backtest_report.diff_json(backtested) if backtested else None)
    lines = backtest_report.diff_lines(backtested)
    return report.text(found, colour=coloured) + "".join(f"{line}\n" for line in lines)
