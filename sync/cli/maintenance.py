"""`obs maintenance start|end|list`: unplanned maintenance as ad-hoc downtimes, and every window in effect.

An ad-hoc downtime mutes what a planned window mutes by default, scoped the same way (one downtime per muted
metric of the queue), but carries a marker of its own: `obs sync` reads it as unmanaged, so it neither
deletes nor changes it, and it ends when it expires or on `obs maintenance end`.
"""

from __future__ import annotations

import argparse
import difflib
import json
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

from sync.cli import live
from sync.cli.conventions import SUMMARIES, Commands, Exit, format_option
from sync.cli.desired import checked
from sync.core import durations
from sync.core.downtimes import schedule_words
from sync.core.keys import Key
from sync.core.kinds import DOWNTIME
from sync.core.resources import Resource, forged_marker
from sync.datadog import adhoc, listing
from sync.datadog.client import Datadog, RequestFailed
from sync.definitions.maintenance import mutes_by_default
from sync.definitions.model import Definitions, Environment
from sync.errors import ObsError
from sync.expand import maintenance
from sync.expand.settings import Shared
from sync.report.vocabulary import many


def register(commands: Commands) -> None:
    parser = commands.add_parser("maintenance", help=SUMMARIES["maintenance"])
    actions = parser.add_subparsers(dest="action", required=True, metavar="ACTION")
    start = actions.add_parser(
        "start", help="mute now what a window mutes by default: the metrics declared parked or stopped"
    )
    start.add_argument("--env", required=True, help="the environment")
    start.add_argument("--queue", required=True, help="the queue's logical name")
    start.add_argument("--for", dest="length", type=_length, default=60, metavar="DURATION", help="e.g. 90m, 2h (1h)")
    start.add_argument("--reason", default="", help="why, for the downtime's message")
    end = actions.add_parser(
        "end",
        help="end a queue's ad-hoc downtimes once its metrics can show the restart (planned windows stay)",
        description="Ends a queue's ad-hoc downtimes. Each expires as late as a planned window's would after its "
        "end: once the metrics show the workers back (about 13 minutes with Metric Streams, 25 with the crawler), "
        "and for parked work once the queue's drain grace is over too. Monitors still alerting then notify. "
        "--now cancels them at once, and monitors still alerting on the maintenance's old data notify now.",
    )
    end.add_argument("--env", required=True, help="the environment")
    end.add_argument("--queue", required=True, help="the queue's logical name")
    end.add_argument("--now", action="store_true", help="cancel at once instead of after the metrics' delay")
    listing = actions.add_parser("list", help="planned and ad-hoc windows with their remaining time")
    listing.add_argument("--env", required=True, help="the environment")
    listing.add_argument("--queue", help="only this queue's windows")
    format_option(listing, ("text", "json"))
    for sub in (start, end, listing):
        live.options(sub, adopt=False)
    parser.set_defaults(handler=run)


def _length(text: str) -> int:
    minutes = durations.minutes(text) or 0
    if not 0 < minutes <= 7 * 1440:
        raise argparse.ArgumentTypeError("write a duration of at most a week, e.g. 90m, 2h or 1d")
    return minutes


def run(args: argparse.Namespace) -> int:
    if args.action == "start":
        _check_reason(args.reason)
    defs, env, desired = checked(args.definitions, args.env)
    if args.queue is not None and args.queue not in {q.name for q in defs.env_queues[env.name]}:
        names = [q.name for q in defs.env_queues[env.name]]
        close = difflib.get_close_matches(args.queue, names, n=1)
        guess = f"did you mean {close[0]}? " if close else ""
        raise ObsError.of(f"unknown queue '{args.queue}' in {args.env}", f"{guess}use one of: {', '.join(names)}")
    with live.connected(env, timeout=args.timeout, verbose=args.verbose) as dd:
        try:
            if args.action == "start":
                return _start(dd, args, mutes_by_default(defs), desired)
            if args.action == "end":
                return _end(dd, args, mutes_by_default(defs), _grace(defs, env, args.queue))
            return _list(dd, args)
        except RequestFailed as exc:
            # A read, or a cancel: either refused, or with no answer at all (then it may have happened).
            raise ObsError.of(f"a Datadog request failed: {exc}", "try again; --verbose shows the calls made") from None


def _check_reason(reason: str) -> None:
    found = forged_marker(reason)
    if found is not None:
        raise ObsError.of(
            f"--reason holds '{found}', which obs writes to mark the downtimes it owns",
            "reword the reason (for example without the colon)",
        )


def _start(dd: Datadog, args: argparse.Namespace, metrics: Sequence[str], desired: Sequence[Resource]) -> int:
    # Monitors and composites alike: a downtime on a composite's constituents does not mute the composite.
    present = {Key.of(r.key).metric for r in desired if r.kind.notifies and r.queue == args.queue}
    muted = [m for m in metrics if m in present]
    if not muted:
        raise ObsError.of(f"queue '{args.queue}' has no monitor to mute in {args.env}", "check its metrics")
    start = datetime.now(UTC).replace(microsecond=0)
    end = start + timedelta(minutes=args.length)
    bodies = {
        f"{args.env}/{args.queue}/{metric}": maintenance.adhoc(
            dd.ownership, args.env, args.queue, metric, start, end, args.reason
        )
        for metric in muted
    }
    done = adhoc.start(dd, bodies, _adhoc_key(dd))
    already = ", ".join(f"{Key.of(key).name} ({_remaining(d, start)})" for key, d in done.already.items())
    if done.error:
        left = [Key.of(key).name for key in done.left]
        state = f"still muted by it: {', '.join(left)}" if left else f"nothing of {args.queue} is muted by this start"
        raise ObsError.of(
            f"could not start maintenance of {args.queue} in {args.env}: {done.error}; undone, {state}"
            + (f"; already muted before: {already}" if already else ""),
            f"obs maintenance end --env {args.env} --queue {args.queue} ends what is left"
            if left
            else "try again; --verbose shows the calls made",
        )
    if done.made:
        made = ", ".join(Key.of(key).name for key in done.made)
        print(f"muted {made} of {args.queue} in {args.env} until {end:%Y-%m-%d %H:%M} UTC")
    if already:
        print(f"already muted by an ad-hoc downtime, left as it is: {already}")
    return Exit.OK


def _grace(defs: Definitions, env: Environment, queue: str | None) -> Callable[[str], int]:
    """Minutes each of the queue's ad-hoc downtimes (by key) still mutes once ended."""
    found = next((q for q in defs.env_queues[env.name] if q.name == queue), None)
    shared: Shared = {}

    def grace(key: str) -> int:
        metric = Key.of(key).metric
        return 0 if found is None or metric is None else maintenance.end_grace(defs, env, found, metric, shared)

    return grace


def _end(dd: Datadog, args: argparse.Namespace, metrics: Sequence[str], grace: Callable[[str], int]) -> int:
    now = datetime.now(UTC).replace(microsecond=0)

    def expiry(key: str) -> datetime | None:
        return None if args.now else now + timedelta(minutes=grace(key))

    ended, notified = adhoc.end(dd, f"{args.env}/{args.queue}/", _adhoc_key(dd), expiry)
    when = "now" if args.now else "when it expires, once its metrics show the maintenance over"
    print(f"ended {many(ended, 'ad-hoc downtime')} of {args.queue} in {args.env}")
    if not ended:
        return Exit.OK
    if not args.now:
        longest = max(grace(f"{args.env}/{args.queue}/{metric}") for metric in metrics)
        print(
            f"each expires once its metrics can show the workers back (parked work: drained), at most "
            f"{longest} min from now, by {now + timedelta(minutes=longest):%H:%M} UTC; --now cancels at once"
        )
    tags = ",".join([*dd.ownership.monitor_tags(), f"env:{args.env}", f"queue:{args.queue}"])
    still = adhoc.alerting(dd, tags, metrics)
    if still:
        print("Muted monitors still alerting:")
    for key, state in still:
        if notified:
            print(f"  {key}  {state}: Datadog notifies it {when}, if it still alerts then")
        else:
            print(f"  {key}  {state}: muted when it changed state, it will not notify again until it changes state")
    return Exit.OK


def _adhoc_key(dd: Datadog) -> Callable[[str], str | None]:
    """The key of an ad-hoc downtime of this definitions set's namespace (None for any other)."""
    return lambda message: maintenance.adhoc_key(message, dd.ownership)


def _list(dd: Datadog, args: argparse.Namespace) -> int:
    now = datetime.now(UTC)
    windows = sorted(
        (w for found in listing.objects(dd, DOWNTIME) if (w := _window(dd, found, args, now)) is not None),
        key=lambda w: (w["kind"], w["name"] or "", w["reason"] or "", w["queue"], w["metric"]),
    )
    if args.format == "json":
        print(json.dumps({"env": args.env, "windows": windows}, indent=2, sort_keys=True))
        return Exit.OK
    rows: dict[tuple[str, str], list[str]] = {}  # (kind and name, when) -> queue/metric
    for w in windows:
        if w["kind"] == "planned":
            label = f"planned  {w['name']}  {w['schedule']}"
        else:
            label = f"ad-hoc  {w['reason'] or '(no reason given)'}"
        rows.setdefault((label, w["remaining"]), []).append(f"{w['queue']} {w['metric']}")
    if not rows:
        print(f"no maintenance windows in {args.env}")
    for (label, when), muted in sorted(rows.items()):
        print(f"{label}: {when}; mutes {', '.join(sorted(muted))}")
    return Exit.OK


def _window(dd: Datadog, found: Mapping[str, Any], args: argparse.Namespace, now: datetime) -> dict[str, Any] | None:
    """One downtime of this environment (and --queue) as `maintenance list --format json` gives it; None for
    one made by hand, another namespace's or environment's, or one whose marker someone cut short."""
    message = str(found.get("message") or "")
    planned, adhoc = DOWNTIME.owner(found, dd.ownership), maintenance.adhoc_key(message, dd.ownership)
    key = Key.parse(planned or adhoc or "")
    if key is None or key.env != args.env or key.metric is None:
        return None
    if args.queue is not None and key.queue != args.queue:
        return None
    schedule = found.get("schedule") or {}
    current = (schedule.get("current_downtime") if "recurrences" in schedule else schedule) or {}
    reason = next((line.removeprefix("Reason: ") for line in message.splitlines() if line.startswith("Reason: ")), "")
    return {
        "kind": "planned" if planned is not None else "ad-hoc",
        "name": key.name if planned is not None else None,
        "schedule": schedule_words(schedule) if planned is not None else None,
        "reason": (reason or None) if planned is None else None,
        "queue": key.queue,
        "metric": key.metric,
        "start": current.get("start"),
        "end": current.get("end"),
        "remaining": _remaining(found, now),
    }


def _remaining(found: Mapping[str, Any], now: datetime) -> str:
    schedule = found.get("schedule") or {}
    current = schedule.get("current_downtime") if "recurrences" in schedule else schedule
    if not current or not current.get("start"):
        return "no occurrence ahead"
    start = datetime.fromisoformat(str(current["start"]))
    end = datetime.fromisoformat(str(current["end"])) if current.get("end") else None
    if start > now:
        return f"next in {_span(start - now)}"
    return f"{_span(end - now)} left" if end else "until canceled"


def _span(delta: timedelta) -> str:
    minutes = max(0, int(delta.total_seconds() // 60))
    hours, rest = divmod(minutes, 60)
    if not hours:
        return f"{rest} min"
    return f"{hours} h" + (f" {rest} min" if rest else "")
