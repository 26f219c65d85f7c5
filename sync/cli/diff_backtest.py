"""`obs diff --backtest ENV`: both revisions' monitors of an environment replayed over its real metric history,
as `obs backtest --base` replays them, for the preview to say what the change would have paged. Opt-in: it
needs read-only credentials for the source, which the rest of `obs diff` never loads."""

from __future__ import annotations

import argparse
import sys
from contextlib import nullcontext
from datetime import UTC, datetime, timedelta
from pathlib import Path

from sync.aws.backtest.cache import Cache
from sync.cli import replaying
from sync.cli.backtest import CACHE
from sync.definitions.load import load
from sync.errors import ObsError
from sync.preview import revision
from sync.preview.compare import Rendered
from sync.report import backtest as backtest_report


def outcome(
    root: Path, args: argparse.Namespace, env: str, base: Rendered, head: Rendered, base_commit: str
) -> backtest_report.Outcome:
    """Both revisions' monitors of `env` replayed over its history. Opt-in and read-only: a source that cannot be
    read is said in the preview (and on stderr), not a failed preview."""
    try:
        if env not in head:
            raise ObsError.of(f"the head has no environment {env}", "name one it has")
        source: str = args.backtest_source
        if args.backtest_days < 1:
            raise ObsError.of(f"--backtest-days {args.backtest_days} is no period", "give at least 1")
        with revision.checked_out(root, args.head) if args.head else nullcontext(root) as folder:
            after = replaying.side(load(folder), env, [], source, resources=head[env])
        before = None
        if env in base:
            with revision.checked_out(root, base_commit, args.base_definitions) as folder:
                side = replaying.side(load(folder), env, [], source, check=False, resources=base[env])
            before = (args.base_label or args.base, side)
        now = datetime.now(UTC).replace(second=0, microsecond=0)
        span = replaying.period(now - timedelta(days=args.backtest_days), now, now, source)
        return env, replaying.replayed(after, before, [], span, source, Cache(root / CACHE))
    except ObsError as exc:
        said = "; ".join(f"{p.what} ({p.fix})" if p.fix else p.what for p in exc.problems)
        print(f"obs diff --backtest {env}: {said}", file=sys.stderr)
        return env, said
