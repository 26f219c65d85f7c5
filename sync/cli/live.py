"""What the commands that read the live org share: their options, the connection and the live plan."""

from __future__ import annotations

import argparse
import math
import os
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import ExitStack, closing, contextmanager

from sync.cli.desired import resources
from sync.core.plan import Plan
from sync.core.resources import Resource
from sync.datadog import reads
from sync.datadog.client import Datadog, RequestFailed
from sync.datadog.credentials import endpoint
from sync.definitions.model import Definitions, Environment
from sync.errors import ObsError


def options(parser: argparse.ArgumentParser, *, adopt: bool) -> None:
    """--timeout and --verbose for every command that reads the org; --adopt for those that plan a sync."""
    if adopt:
        parser.add_argument(
            "--adopt",
            action="store_true",
            help="take over unmanaged monitors and dashboards named like a desired one, keeping their IDs "
            "(reads every monitor of the org)",
        )
    parser.add_argument(
        "--timeout", type=positive_seconds, default=30.0, metavar="SECONDS", help="per request (default 30)"
    )
    parser.add_argument("--verbose", action="store_true", help="report API calls, retries and waits on stderr")


def count_between(low: int, high: int) -> Callable[[str], int]:
    def parse(text: str) -> int:
        value = int(text)
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(f"must be from {low} to {high}")
        return value

    return parse


def positive_seconds(text: str) -> float:
    value = float(text)
    if not value > 0:  # the client reads 0 as "no timeout at all", and a negative one fails deep inside urllib3
        raise argparse.ArgumentTypeError("must be more than 0")
    return value


RETRY_WAIT_ENV = "OBS_RETRY_WAIT"
RETRY_WAIT = 0.5  # seconds before the first retry of a failed request; it doubles each try, up to 8 s


def retry_wait(environ: Mapping[str, str]) -> float:
    """The first wait before a failed request is tried again: OBS_RETRY_WAIT seconds, else the default."""
    text = environ.get(RETRY_WAIT_ENV, "").strip()
    if not text:
        return RETRY_WAIT
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not 0 <= value <= 60:  # NaN fails too
        raise ObsError.of(
            f"{RETRY_WAIT_ENV} is {text!r}, not a number of seconds from 0 to 60",
            f"set it to the seconds to wait before the first retry (default {RETRY_WAIT:g}), or unset it",
        )
    return value


@contextmanager
def connected(
    env: Environment, *, timeout: float, verbose: bool, workers: int = 1, without: str = ""
) -> Iterator[Datadog]:
    """A client for the environment's org; with `verbose`, the calls it made are reported even on failure.
    `without`: what the command can do without credentials, said when they are missing."""
    target = endpoint(os.environ, env.site, env.name, without)
    client = Datadog(target, workers=workers, timeout=timeout, backoff=retry_wait(os.environ), ownership=env.ownership)
    with closing(client) as dd:
        try:
            yield dd
        finally:
            if verbose:
                _report_calls(dd)


@contextmanager
def reaching(
    defs: Definitions, env: Environment, *, timeout: float, verbose: bool, workers: int = 1, without: str = ""
) -> Iterator[Datadog]:
    """`connected`, for a command that expands the definitions once connected (`planned`): should the
    credentials be missing or refused, a problem of the definitions is still said first."""
    stack = ExitStack()
    try:
        dd = stack.enter_context(connected(env, timeout=timeout, verbose=verbose, workers=workers, without=without))
    except ObsError:
        resources(defs, env)  # raises what is wrong with the definitions, if anything is
        raise
    with stack:
        yield dd


def planned(dd: Datadog, defs: Definitions, env: Environment, *, adopt: bool) -> tuple[Sequence[Resource], Plan, str]:
    """The environment's resources, expanded and checked while the lists their plan reads are read already
    (sync.datadog.reads: on a big org the two take about as long), and the plan against the live org."""
    with reads.ahead(dd, env.name, adopt=adopt) as reading:
        desired = resources(defs, env)
        reading.expect(desired)
        found, against = plan(dd, env.name, desired, adopt=adopt)
    return desired, found, against


def plan(dd: Datadog, env: str, desired: Sequence[Resource], *, adopt: bool) -> tuple[Plan, str]:
    """The plan against the live org, and the words naming where the live state came from."""
    try:
        found = reads.plan(dd, env, desired, adopt=adopt)
    except RequestFailed as exc:
        fix = denied(exc) if exc.status in (401, 403) else "try again; --verbose shows the calls made"
        raise ObsError.of(f"could not read the live org: {exc}", fix) from None
    return found, f"the live org ({dd.host})"


# The application-key scope each endpoint obs reads needs (the OpenAPI spec's x-permission), longest first.
_SCOPES = (
    ("/api/v1/slo/correction", "slos_read"),
    ("/api/v2/downtime", "monitors_downtime"),
    ("/api/v1/slo", "slos_read"),
    ("/api/v1/dashboard", "dashboards_read"),
    ("/api/v1/monitor", "monitors_read"),
)
READ_SCOPES = "monitors_read, dashboards_read, slos_read and monitors_downtime"


def denied(exc: RequestFailed) -> str:
    """The fix for a 401 or 403: the right org, and the scopes obs reads with, naming the refused call's."""
    label = str(exc).split(": ", 1)[0]  # "GET /api/v2/downtime"
    path = label.rsplit(" ", 1)[-1]
    needed = next((scope for prefix, scope in _SCOPES if path.startswith(prefix)), None)
    which = f" ({label} needs {needed})" if needed else ""
    return (
        "check that DD_API_KEY and DD_APP_KEY belong to this org, and that the application key has the scopes "
        f"{READ_SCOPES}{which}"
    )


def _report_calls(dd: Datadog) -> None:
    calls = ", ".join(f"{label} {n}" for label, n in sorted(dd.calls.items()))
    print(
        f"API calls: {sum(dd.calls.values())} ({calls}); {dd.retried} retried, {dd.throttled} throttled (429), "
        f"{dd.waited:.1f} s waited for rate limits",
        file=sys.stderr,
    )
