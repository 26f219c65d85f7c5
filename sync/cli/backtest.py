"""`obs backtest`: the environment's monitors replayed over real metric history, with the model of `obs test`."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path

from sync.aws.backtest.cache import Cache
from sync.cli import calibrating, replaying
from sync.cli.conventions import SUMMARIES, Commands, Exit, format_option
from sync.core.backtest.fetched import SOURCES
from sync.core.resources import Resource
from sync.definitions.load import load
from sync.errors import ObsError, Problem
from sync.preview import own_code, revision
from sync.report import backtest as report

CACHE = Path(".obs-cache") / "backtest"


def register(commands: Commands) -> None:
    parser = commands.add_parser(
        "backtest",
        help=SUMMARIES["backtest"],
        description="Reads the series every monitor of the environment reads from CloudWatch (GetMetricData, "
        "credentials from the standard AWS chain), or with --source datadog from Datadog's timeseries query "
        "(DD_API_KEY and DD_APP_KEY, the timeseries_query permission), and evaluates every monitor, composite "
        "and burn-rate alert on them minute by minute with the model of `obs test`, planned maintenance on the "
        "real clock. Reports per monitor and per audience the alerts, pages and notifications, and the "
        f"incidents. Fetched days are kept in {CACHE}/ under the definitions folder. Exit 0 when it ran, 1 on error.",
    )
    parser.add_argument("--env", required=True, metavar="ENV", help="the environment to replay")
    parser.add_argument("--days", type=int, default=14, metavar="N", help="the period: the last N days (default 14)")
    parser.add_argument("--from", dest="start", metavar="T", help="the period's start, ISO 8601 UTC (with --to)")
    parser.add_argument("--to", dest="end", metavar="T", help="the period's end, ISO 8601 UTC (default: now)")
    parser.add_argument(
        "--source",
        choices=sorted(SOURCES),
        default="cloudwatch",
        help="where the history is read: CloudWatch (default; AWS integration metrics, 15 days at 1-minute "
        "resolution) or Datadog (any metric Datadog holds, 15 months; one request per UTC day and 16 series)",
    )
    parser.add_argument("--queue", action="append", default=[], metavar="Q", help="only this queue (repeatable)")
    parser.add_argument(
        "--base",
        metavar="REF",
        help="also replay the definitions of this git revision (rendered as `obs diff` renders a base: by its own "
        "code when the change edits obs) on the same history, "
        "and say which incidents would no longer page and which pages are new",
    )
    parser.add_argument(
        "--calibrate",
        action="store_true",
        help="also read the monitors' real state changes for the period from Datadog's monitor alert events "
        "(DD_API_KEY and DD_APP_KEY, the monitors_read and events_read permissions, whatever --source is) and "
        "compare them with the model's: transitions matched, missed and extra, their time offsets, and which of "
        "the model's assumptions the differences point at",
    )
    parser.add_argument("--no-cache", action="store_true", help="read everything from the source, keep nothing")
    parser.add_argument("--cache", type=Path, metavar="DIR", help=f"the cache folder (default: {CACHE}/)")
    format_option(parser)
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    root: Path = args.definitions
    source: str = args.source
    head = replaying.side(load(root), args.env, args.queue, source)
    if args.calibrate:
        calibrating.check_credentials(head.env)
    base = (args.base, _base(root, args.base, args.env, args.queue, source)) if args.base else None
    now = datetime.now(UTC).replace(second=0, microsecond=0)
    span = period_of(args.start, args.end, args.days, now, source)
    cache = Cache(None if args.no_cache else (args.cache or root / CACHE))
    result = replaying.replayed(head, base, args.queue, span, source, cache)
    if args.calibrate:
        result = calibrating.calibrated(result, head.env)
    sys.stdout.write({"json": report.as_json, "markdown": report.markdown}.get(args.format, report.text)(result))
    return Exit.OK


def _base(root: Path, ref: str, env_name: str, queues: Sequence[str], source: str) -> replaying.Side:
    """The base revision's definitions, read from git as `obs diff` reads a base (the working tree untouched),
    and its monitors rendered by its own code when the change edits obs itself."""
    revision.repository_prefix(root)
    commit = revision.resolve(root, ref)
    with revision.checked_out(root, ref) as folder:
        try:
            defs = load(folder)
            if env_name not in {e.name for e in defs.environments}:
                raise ObsError.of(f"the base revision '{ref}' has no environment {env_name}", "compare with another")
            rendered = own_render(root, commit, env_name)
            return replaying.side(defs, env_name, queues, source, check=False, resources=rendered)
        except ObsError as exc:
            what = f"the base revision '{ref}' does not load with this version of obs"
            raise ObsError(Problem(what=what, fix="compare with another revision"), *exc.problems) from None


def own_render(root: Path, commit: str, env_name: str, inside: str | None = None) -> Sequence[Resource] | None:
    """The base's monitors of the environment as the base's own code renders them, when the change edits obs
    itself (a changed default then shows as a change); None where obs is unchanged, or, said on stderr, where
    the base's code cannot render them."""
    if not own_code.changed_files(root, commit, None):
        return None
    rendered = own_code.render_with_own_code(root, commit, revision.prefix_of(root, inside))
    if rendered is None or env_name not in rendered:
        print(
            "warning: this change edits obs itself and the base could not be rendered by its own code: both "
            "sides are rendered by this obs, so a changed default replays as no change",
            file=sys.stderr,
        )
        return None
    return rendered[env_name]


def period_of(start_text: str | None, end_text: str | None, days: int, now: datetime, source: str) -> replaying.Period:
    """The period of --from and --to (ISO 8601, UTC), or the last `days` days to --to or now."""
    end = _time(end_text, "--to") if end_text else now
    if start_text:
        start = _time(start_text, "--from")
    else:
        if days < 1:
            raise ObsError.of(f"--days {days} is no period", "give at least 1")
        start = end - timedelta(days=days)
    return replaying.period(start, end, now, source)


def _time(text: str, option: str) -> datetime:
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise ObsError.of(
            f"{option} {text!r} is not an ISO 8601 time", f"write it as {option} 2025-01-31T08:00Z"
        ) from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC).replace(second=0, microsecond=0)
