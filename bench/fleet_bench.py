"""Fleet-scale benchmark of obs against the fake Datadog, with a per-resource refresh as the baseline.

Generates N queues x the metric catalogue x 3 environments (bench/fleet.py, every topic subscription with a
redrive DLQ so that every metric applies) and measures, printing one Markdown table:

1. rendering every environment: `obs render --out DIR` (every environment, written as one JSON file per
   resource) and `obs validate` (every environment expanded and checked, nothing written), each in a child
   process: wall time, CPU (of it the kernel's) and peak RSS (the child's ru_maxrss from wait4), and the time
   a plain loop takes to create the same files empty just before and after the render (the disk's pace);
2. a no-change plan of prod against an org seeded with exactly what obs would create (written straight into
   the fake, no HTTP): the changes reported (must be 0), API calls and wall time;
3. a plan and a sync after raising the thresholds of 1% of prod's monitors, and a plan after that sync;
4. the first sync of --creates monitors into an empty org under the rate limit: wall time against the
   minimum the limit allows, 429 answers and failed requests;
5. the baseline: the no-change plan done the per-resource way, one GET /api/v1/monitor/{id} per monitor
   (as Terraform's refresh does), through datadog-api-client with --baseline-concurrency requests in
   flight, against the same fake with the same latency and rate limit.

Every step that talks to the fake starts as one of its rate-limit windows opens (the fake's windows are
fixed and aligned to its start), so no step inherits a budget another step spent.

Run: .venv/bin/python bench/fleet_bench.py [--queues 1000] [--latency 0.02] [--rate-limit 500] [--period 10]
     [--creates 2000] [--baseline-concurrency 10] [--baseline-limit N] [--skip-baseline] [--json]
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import math
import os
import platform
import re
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the fake Datadog lives in tests/

import fleet
from datadog_api_client import ApiClient, Configuration
from datadog_api_client.rest import RESTClientObject
from datadog_api_client.v1.api.dashboards_api import DashboardsApi
from datadog_api_client.v1.api.monitors_api import MonitorsApi
from fake_process import FakeProcess

from sync.check import accepted
from sync.cli.app import main as obs
from sync.cli.render import file_name
from sync.core import placeholders
from sync.core.kinds import COMPOSITE, DASHBOARD, KINDS, MONITOR, Kind
from sync.core.resources import Resource
from sync.definitions.load import load
from sync.definitions.model import Definitions
from sync.expand.desired import expand
from sync.expand.settings import settings_for
from tests.fakedd import Request

ROOT = Path(__file__).resolve().parent.parent
ENV = "prod"
CHANGED_SHARE = 0.01  # of prod's monitors whose thresholds step 3 raises
MB = 1024 * 1024
_PLAN = re.compile(r"^Plan: (\d+) to create, (\d+) to update, (\d+) to delete, (\d+) unchanged", re.MULTILINE)
_APPLIED = re.compile(r"^Applied: (\d+) created, (\d+) updated, (\d+) deleted, (\d+) failed", re.MULTILINE)
_OBJECT_ID = re.compile(r"/(\d+|[a-z0-9]{3}-[a-z0-9]{3}-[a-z0-9]{3})(?=/|$)")


# -- the table


@dataclass(frozen=True)
class Row:
    step: str
    figure: str
    value: float | int | str
    unit: str = ""
    goal: str = ""
    met: bool | None = None  # None: a figure without a goal


def shown(value: float | int | str, unit: str) -> str:
    if isinstance(value, str):
        text = value
    elif isinstance(value, int):
        text = f"{value:,}"
    else:
        text = f"{value:,.2f}"
    return f"{text} {unit}".strip()


def markdown(rows: Sequence[Row], machine: Mapping[str, str], notes: Sequence[tuple[str, str]]) -> str:
    lines = [
        "| step | figure | value | goal | met |",
        "|---|---|---:|---|:---:|",
        *(
            f"| {r.step} | {r.figure} | {shown(r.value, r.unit)} | {r.goal} | "
            f"{'' if r.met is None else 'yes' if r.met else '**no**'} |"
            for r in rows
        ),
        "",
        "Machine: " + ", ".join(f"{k} {v}" for k, v in machine.items()),
        "",
        *(f"- {step}: {text}" for step, text in notes),
    ]
    return "\n".join(lines) + "\n"


def machine_info(options: argparse.Namespace, load_before: float) -> dict[str, str]:
    """CPUs, versions, the fake's settings, and the load average: other work on the machine skews wall times."""
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return {
        "CPUs": f"{os.cpu_count()} ({usable} usable)",
        "Python": platform.python_version(),
        "platform": platform.platform(terse=True),
        "datadog-api-client": metadata.version("datadog-api-client"),
        "load average (1 min) before and after": f"{load_before:.2f}, {os.getloadavg()[0]:.2f}",
        "fake Datadog": f"{options.latency * 1000:g} ms per request, "
        + (
            f"{options.rate_limit} requests per {options.period:g} s per endpoint group"
            if options.rate_limit
            else "no rate limit"
        ),
    }


# -- the fake Datadog and obs in this process


@dataclass
class Org:
    """A fake Datadog that obs reaches through DD_HOST, and where its rate-limit windows start."""

    dd: FakeProcess
    opened: float  # time.monotonic() when the fake's rate-limit windows started
    period: float
    limited: bool

    def fresh_window(self) -> None:
        """Sleep until one of the fake's fixed rate-limit windows opens: its budget is then full."""
        if not self.limited:
            return
        elapsed = time.monotonic() - self.opened
        time.sleep(math.ceil(elapsed / self.period) * self.period - elapsed + 0.005)

    def requests(self) -> list[Request]:
        return list(self.dd.log)


@contextlib.contextmanager
def org(options: argparse.Namespace) -> Iterator[Org]:
    with FakeProcess(options.latency, options.rate_limit or None, options.period) as dd:
        os.environ.update(DD_API_KEY=dd.api_key, DD_APP_KEY=dd.app_key, DD_HOST=dd.url)
        yield Org(dd, dd.opened, options.period, limited=bool(options.rate_limit))


@dataclass(frozen=True)
class Traffic:
    """What the fake saw during one step."""

    requests: tuple[Request, ...]

    @property
    def calls(self) -> int:
        return len(self.requests)

    @property
    def throttled(self) -> int:
        return sum(r.status == 429 for r in self.requests)

    @property
    def failed(self) -> int:
        """Answers that were neither a success nor a 429 (which is waited out, not a failure)."""
        return sum(r.status != 429 and not (r.status is not None and 200 <= r.status < 300) for r in self.requests)

    def per_endpoint(self) -> str:
        counts = Counter(f"{r.method} {_OBJECT_ID.sub('/{id}', r.path)}" for r in self.requests)
        return ", ".join(f"{endpoint} {n}" for endpoint, n in sorted(counts.items()))

    def count(self, method: str, path: str, status: int = 200) -> int:
        return sum(r.method == method and r.path == path and r.status == status for r in self.requests)


@dataclass(frozen=True)
class Command:
    code: int
    wall: float
    out: str
    err: str
    traffic: Traffic
    obs_cpu: float = 0.0  # CPU seconds of this process (obs) during the command
    fake_cpu: float = 0.0  # CPU seconds of the fake's process during the command

    def split(self) -> str:
        """Where the wall time went: obs's own CPU, the fake's, and the rest (latency, rate-limit waits)."""
        return (
            f"{self.wall:.2f} s wall = obs CPU {self.obs_cpu:.2f} s, fake Datadog CPU {self.fake_cpu:.2f} s "
            f"(its own process), the rest waiting (latency, rate limits, the other process)"
        )

    def plan(self) -> dict[str, int]:
        """The plan summary obs printed; a missing one fails the benchmark loudly."""
        found = _PLAN.search(self.out)
        if not found:
            raise RuntimeError(f"no plan summary in the output of obs (exit {self.code}):\n{self.out}{self.err}")
        return dict(zip(("create", "update", "delete", "unchanged"), map(int, found.groups()), strict=True))

    def applied(self) -> dict[str, int]:
        found = _APPLIED.search(self.out)
        if not found:
            raise RuntimeError(f"no sync outcome in the output of obs (exit {self.code}):\n{self.out}{self.err}")
        return dict(zip(("created", "updated", "deleted", "failed"), map(int, found.groups()), strict=True))

    def verbose(self) -> str:
        return next((line for line in self.err.splitlines() if line.startswith("API calls:")), "")


def phases(definitions: Path, env: str | None) -> str:
    """Where obs's time goes, measured in this process: CPU seconds to load, expand and model-check."""
    began = time.process_time()
    defs = load(definitions)
    loaded = time.process_time()
    envs = [env] if env else [e.name for e in defs.environments]
    resources = [r for name in envs for r in expand(defs, name)]
    expanded = time.process_time()
    accepted.check(defs, resources)
    checked = time.process_time()
    return (
        f"CPU seconds in this process: load and schema-check {loaded - began:.2f}, expand "
        f"{expanded - loaded:.2f}, model check {checked - expanded:.2f} ({len(resources):,} resources"
        f"{'' if env else ', every environment'})"
    )


def floor(live: Sequence[Resource]) -> int:
    """The fewest calls that read these objects (the org holds them and nothing else), each kind's list as its
    record says: a page per `size` objects, and where the answer gives no total, one more to see the end (a
    short page, or an empty one after a full one); plus one read per object a list holds only a summary of."""
    least = 0
    for path in sorted({kind.api.path for kind in KINDS}):
        listing = next(kind.listing for kind in KINDS if kind.api.path == path)
        held = sum(r.kind.api.path == path for r in live)
        least += max(1, math.ceil(held / listing.size)) if listing.total else held // listing.size + 1
        least += held if listing.detail else 0
    return least


def changes(counts: Mapping[str, int]) -> int:
    return counts["create"] + counts["update"] + counts["delete"]


def run_obs(where: Org, definitions: Path, *argv: str) -> Command:
    """One obs command in this process, as sync_bench runs it: exit code, wall, output and the fake's log."""
    where.dd.reset_log()
    out, err = io.StringIO(), io.StringIO()
    fake_before = where.dd.cpu()
    began, cpu = time.perf_counter(), time.process_time()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = obs(["--definitions", str(definitions), *argv, "--verbose"])
    wall, cpu = time.perf_counter() - began, time.process_time() - cpu
    fake = where.dd.cpu() - fake_before
    return Command(code, wall, out.getvalue(), err.getvalue(), Traffic(tuple(where.requests())), cpu, fake)


# -- child processes


@dataclass(frozen=True)
class Child:
    wall: float
    peak_rss: int  # bytes
    cpu: float  # user + system seconds
    system: float  # of which the kernel's (for render, mostly creating files)
    out: str


def child(argv: Sequence[str]) -> Child:
    """Run obs in a child process; its own peak RSS and CPU time come from wait4."""
    with tempfile.TemporaryFile("w+") as out:
        began = time.perf_counter()
        with subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, cwd=ROOT, text=True) as process:
            _, status, usage = os.wait4(process.pid, 0)
            wall = time.perf_counter() - began
            process.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        text = out.read()
    scale = 1 if sys.platform == "darwin" else 1024  # ru_maxrss is bytes on macOS, KiB on Linux
    if process.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)} exited {process.returncode}:\n{text}")
    return Child(wall, usage.ru_maxrss * scale, usage.ru_utime + usage.ru_stime, usage.ru_stime, text)


def created(folder: Path, names: Sequence[str]) -> float:
    """Seconds to create these files, empty, under a new folder: what the file system alone costs a render."""
    for parent in {str(Path(name).parent) for name in names}:
        (folder / parent).mkdir(parents=True, exist_ok=True)
    began = time.perf_counter()
    for name in names:
        os.close(os.open(folder / name, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o666))
    return time.perf_counter() - began


def obs_child(definitions: Path, *argv: str) -> Child:
    return child([sys.executable, "-m", "sync.cli", "--definitions", str(definitions), *argv])


# -- definitions


def monitors_of(resources: Iterable[Resource]) -> list[Resource]:
    return [r for r in resources if r.kind == MONITOR]


def metric_pair(resource: Resource) -> tuple[str, str]:
    """(queue, metric) of a generated monitor's key, env/queue/metric[/topic]: one monitor per pair here."""
    _, queue, metric, *_ = resource.key.split("/")
    return queue, metric


def raised_thresholds(defs: Definitions, desired: Sequence[Resource], share: float) -> fleet.QueueMetrics:
    """Thresholds 10% higher (a zero becomes 1) for every 1/share-th prod monitor, as queue settings."""
    env = defs.environment(ENV)
    queues = {q.name: q for q in defs.queues}
    metrics = {m.name: m for m in defs.metrics}
    step = round(1 / share)
    pairs = [metric_pair(r) for r in monitors_of(desired)]
    chosen = [(queue, metric) for queue, metric in pairs if metric in metrics][step // 2 :: step]  # not burn rates
    changed: dict[str, dict[str, dict[str, Any]]] = {}
    for queue, metric in chosen:
        thresholds = settings_for(defs, env, queues[queue], metrics[metric])["thresholds"]
        raised = {
            name: round(value * 1.1, 4) if value else 1 for name, value in thresholds.items() if value is not None
        }
        changed.setdefault(queue, {})[metric] = {"thresholds": raised}
    return changed


def exact_set(target: Path, monitors: int) -> tuple[int, int, int]:
    """Write a generated set whose prod has exactly `monitors` monitors: enough queues, then the surplus
    (from the last queues) disabled in the inventory. Its queues, prod monitors, and prod monitors and
    composites (both live at the monitor endpoint), counted by expanding it."""
    queues = max(1, monitors // 9)
    while True:
        fleet.write(target, queues, subscription_dlqs=True)
        found = monitors_of(expand(load(target), ENV))
        if len(found) >= monitors:
            break
        queues += max(1, (monitors - len(found)) // 9)
    surplus: dict[str, dict[str, dict[str, Any]]] = {}
    # Turned off: monitors of metrics no composite combines (an SLO's burn-rate monitors cannot be turned off alone).
    metrics = load(target).metrics
    combined = " ".join(m.composite for m in metrics if m.composite)
    spare = {m.name for m in metrics if not m.composite and f"[[metric:{m.name}]]" not in combined}
    pairs = [pair for pair in map(metric_pair, found) if pair[1] in spare]
    for queue, metric in pairs[len(pairs) - (len(found) - monitors) :]:
        surplus.setdefault(queue, {})[metric] = {"enabled": False}
    fleet.write(target, queues, subscription_dlqs=True, metrics=surplus)
    resources = expand(load(target), ENV)
    return queues, len(monitors_of(resources)), sum(r.kind in (MONITOR, COMPOSITE) for r in resources)


def seed(where: Org, desired: Sequence[Resource]) -> tuple[list[int], list[str]]:
    """Create what obs would, straight into the fake (its own checks and rewrites, no HTTP): a synced org.
    Kind by kind in the order a sync writes them, so that links (an SLO's ID in a burn-rate monitor, a
    dashboard's in a message, monitors' in a composite) resolve to the IDs made before. The IDs of the
    monitors and dashboards, for the baseline."""
    ids: dict[placeholders.Ref, str] = {}
    made: dict[Kind, list[str]] = {}
    for kind in KINDS:
        ones = [r for r in desired if r.kind == kind]
        made[kind] = where.dd.create(kind.name, [placeholders.resolve(r.body, ids) for r in ones])
        ids.update(((kind.name, r.key), found) for r, found in zip(ones, made[kind], strict=True))
    return [int(i) for i in made[MONITOR] + made[COMPOSITE]], made[DASHBOARD]


# -- the baseline: one GET per object, as Terraform's refresh does


class _PooledClient(ApiClient):
    """datadog-api-client with a connection pool as large as the requests in flight."""

    def __init__(self, configuration: Configuration, pool: int) -> None:
        self._pool = pool
        super().__init__(configuration)

    def _build_rest_client(self) -> RESTClientObject:
        return RESTClientObject(self.configuration, maxsize=self._pool)  # type: ignore[no-untyped-call]


@dataclass(frozen=True)
class Refresh:
    failed: int  # GETs that raised (after the client's own retries)
    wall: float
    traffic: Traffic


def refresh(where: Org, objects: Sequence[tuple[Kind, int | str]], concurrency: int) -> Refresh:
    """GET each object with the client's own retry on (a 429 waits X-RateLimit-Reset, as the Terraform
    provider's client does); bodies read as raw JSON, as obs reads them, so no model parsing is timed."""
    keys = {"apiKeyAuth": where.dd.api_key, "appKeyAuth": where.dd.app_key}
    config = Configuration(host=where.dd.url, api_key=keys, enable_retry=True, max_retries=20)  # type: ignore[no-untyped-call]
    config.preload_content = False
    config.check_input_type = False
    where.dd.reset_log()
    with _PooledClient(config, concurrency) as client:
        monitors = MonitorsApi(client)  # type: ignore[no-untyped-call]
        dashboards = DashboardsApi(client)  # type: ignore[no-untyped-call]
        getters: dict[Kind, Callable[..., Any]] = {MONITOR: monitors.get_monitor, DASHBOARD: dashboards.get_dashboard}

        def get(kind: Kind, object_id: int | str) -> bool:
            try:
                json.loads(getters[kind](object_id).data)
            except Exception:  # any failure counts; the table shows how many
                return False
            return True

        began = time.perf_counter()
        with ThreadPoolExecutor(max_workers=concurrency) as pool:
            results = list(pool.map(get, *zip(*objects, strict=True)))
        wall = time.perf_counter() - began
    return Refresh(results.count(False), wall, Traffic(tuple(where.requests())))


def refresh_estimate(monitors: int, per_get: float, limit: int | None, period: float) -> float:
    """Wall time for `monitors` GETs from a measured time per GET: when the rate limit binds, every full
    budget but the last costs a whole period and the rest is paid at the measured pace."""
    if not limit or limit * per_get >= period:
        return monitors * per_get
    windows = math.ceil(monitors / limit)
    return (windows - 1) * period + (monitors - (windows - 1) * limit) * per_get


# -- the steps


@dataclass
class Bench:
    options: argparse.Namespace
    scratch: Path
    rows: list[Row] = field(default_factory=list)
    notes: list[tuple[str, str]] = field(default_factory=list)  # (step, text)

    def row(
        self, step: str, figure: str, value: float | int | str, unit: str = "", goal: str = "", met: bool | None = None
    ) -> None:
        self.rows.append(Row(step, figure, value, unit, goal, met))

    def note(self, step: str, text: str) -> None:
        self.notes.append((step, text))

    def render(self, definitions: Path, defs: Definitions) -> None:
        step = "1 render"
        self.row(
            step,
            "queues x metrics x environments",
            f"{len(defs.queues):,} x {len(defs.metrics)} x {len(defs.environments)}",
        )
        start = obs_child(definitions, "--help")
        out = self.scratch / "render"
        # The file system's pace moves (here, for a while after many files are deleted, creating one costs ten
        # times as much): the files a render writes, created empty just before and just after it, show its pace.
        names = [f"{env.name}{os.sep}{file_name(r)}" for env in defs.environments for r in expand(defs, env.name)]
        before = created(self.scratch / "before", names)
        render = obs_child(definitions, "render", "--out", str(out))
        counts = {env.name: len(list((out / env.name / "monitors").glob("*.json"))) for env in defs.environments}
        total = sum(counts.values())
        self.row(
            step,
            "monitors rendered (" + ", ".join(f"{k} {v:,}" for k, v in counts.items()) + ")",
            total,
            goal="about 30,000",
        )
        self.row(
            step,
            "wall, `obs render --out DIR`: every environment expanded, checked and written, one JSON file each",
            render.wall,
            "s",
            "< 3 s",
            render.wall < 3,
        )
        self.row(
            step,
            "peak memory of that process (ru_maxrss from wait4)",
            render.peak_rss / MB,
            "MB",
            "< 400 MB",
            render.peak_rss / MB < 400,
        )
        self.row(step, "CPU (user + system) of that process", render.cpu, "s")
        self.row(step, "of which system time (the kernel, mostly creating the files)", render.system, "s")
        self.row(
            step,
            f"this disk's pace: the same {len(names):,} files created empty by a plain loop, just before and after",
            f"{before:.2f} s, {created(self.scratch / 'after', names):.2f} s",
        )
        check = obs_child(definitions, "validate")
        self.row(
            step,
            "wall, `obs validate`: every environment expanded and checked in memory, nothing written",
            check.wall,
            "s",
            "< 3 s",
            check.wall < 3,
        )
        self.row(
            step,
            "peak memory of `obs validate` (ru_maxrss from wait4)",
            check.peak_rss / MB,
            "MB",
            "< 400 MB",
            check.peak_rss / MB < 400,
        )
        self.row(step, "CPU (user + system) of `obs validate`", check.cpu, "s")
        self.row(step, "of each child above: start-up and imports (`obs --help`)", start.wall, "s")
        if render.wall >= 3 or check.wall >= 3:
            self.note(step, f"goal not met: {phases(definitions, None)}")
        self.note(step, f"`obs validate` said: {check.out.strip()}")

    def no_change_plan(
        self, where: Org, definitions: Path, desired: Sequence[Resource]
    ) -> tuple[Command, list[int], list[str]]:
        step = f"2 no-change plan ({ENV})"
        began = time.perf_counter()
        monitor_ids, dashboard_ids = seed(where, desired)
        self.row(
            step,
            "seeded straight into the fake (monitors, dashboards; seconds, not timed below)",
            f"{len(monitor_ids):,}, {len(dashboard_ids)}; {time.perf_counter() - began:.1f} s",
        )
        where.fresh_window()
        plan = run_obs(where, definitions, "plan", "--env", ENV)
        counts = plan.plan()
        self.row(
            step,
            "changes reported (create + update + delete; not 0 means the seeding is wrong)",
            changes(counts),
            goal="0",
            met=changes(counts) == 0,
        )
        least = floor(desired)
        self.row(
            step, "API calls", plan.traffic.calls, goal=f"<= {least} (the API's floor)", met=plan.traffic.calls <= least
        )
        self.row(
            step, "wall (all of `obs plan`: load, expand, check, read, diff)", plan.wall, "s", "< 2 s", plan.wall < 2
        )
        self.row(step, "of which obs's own CPU (this process)", plan.obs_cpu, "s")
        self.row(step, "and the fake Datadog's CPU (its own process)", plan.fake_cpu, "s")
        if plan.wall >= 2:
            self.note(step, f"goal not met: {plan.split()}; {phases(definitions, ENV)}")
        self.note(step, f"plan: {plan.traffic.per_endpoint()}; obs --verbose: {plan.verbose()}")
        if changes(counts):
            shown_lines = "\n".join(plan.out.splitlines()[:12])
            self.note(
                step,
                f"**the plan against the seeded org is not empty**: the seeding differs from a sync:\n\n"
                f"```\n{shown_lines}\n```",
            )
        return plan, monitor_ids, dashboard_ids

    def changed_thresholds(self, where: Org, definitions: Path, defs: Definitions, desired: Sequence[Resource]) -> None:
        step = f"3 {CHANGED_SHARE:.0%} thresholds"
        changed = raised_thresholds(defs, desired, CHANGED_SHARE)
        expected = sum(len(m) for m in changed.values())
        fleet.write(definitions, len(defs.queues), subscription_dlqs=True, metrics=changed)
        self.row(step, f"monitors whose thresholds were raised (of {len(monitors_of(desired)):,} in {ENV})", expected)
        where.fresh_window()
        plan = run_obs(where, definitions, "plan", "--env", ENV)
        counts = plan.plan()
        self.row(
            step,
            "plan: changes reported",
            changes(counts),
            goal=f"{expected:,} updates",
            met=counts["update"] == expected == changes(counts),
        )
        self.row(step, "plan: API calls", plan.traffic.calls)
        self.row(step, "plan: wall", plan.wall, "s")
        where.fresh_window()
        sync = run_obs(where, definitions, "sync", "--env", ENV)
        done = sync.applied()
        self.row(
            step,
            "sync: changes applied (failed)",
            f"{done['created'] + done['updated'] + done['deleted']:,} ({done['failed']})",
            goal=f"{expected:,} (0)",
            met=done["updated"] == expected and done["failed"] == 0,
        )
        self.row(
            step,
            "sync: API calls (429 answers, failed requests)",
            f"{sync.traffic.calls:,} ({sync.traffic.throttled}, {sync.traffic.failed})",
        )
        self.row(step, "sync: wall", sync.wall, "s")
        where.fresh_window()
        after = run_obs(where, definitions, "plan", "--env", ENV)
        self.row(
            step,
            "plan after the sync: changes reported",
            changes(after.plan()),
            goal="0",
            met=changes(after.plan()) == 0,
        )
        self.note(step, f"plan: {plan.traffic.per_endpoint()}")
        self.note(step, f"sync: {sync.traffic.per_endpoint()}; obs --verbose: {sync.verbose()}")

    def initial_sync(self) -> None:
        options = self.options
        step = "4 first sync, empty org"
        definitions = self.scratch / "creates"
        queues, monitors, at_endpoint = exact_set(definitions, options.creates)
        with org(options) as where:
            where.fresh_window()
            sync = run_obs(where, definitions, "sync", "--env", ENV)
            live = where.dd.monitor_count()
        done = sync.applied()
        created = sync.traffic.count("POST", "/api/v1/monitor")
        self.row(
            step,
            f"monitors to create ({queues:,} queues; with composites, to create and live after the sync)",
            f"{monitors:,} ({at_endpoint:,}, {live:,})",
            goal=f"{options.creates:,}",
            met=monitors == options.creates and live == at_endpoint,
        )
        self.row(step, "wall", sync.wall, "s")
        if options.rate_limit:
            windows = math.ceil(created / options.rate_limit)
            least = (windows - 1) * options.period
            self.row(
                step,
                f"minimum the rate limit allows: (ceil(n/L) - 1) x P = ({windows} - 1) x {options.period:g}",
                least,
                "s",
            )
            ratio = sync.wall / least if least else None
            self.row(
                step,
                "wall / minimum",
                "n/a (one window)" if ratio is None else f"{ratio:.2f}",
                goal="<= 1.1",
                met=None if ratio is None else ratio <= 1.1,
            )
            self.note(
                step,
                f"minimum: a limit of L = {options.rate_limit} monitor writes per P = {options.period:g} s, "
                f"starting full (the sync starts as a window opens), lets n = {created:,} creates finish no sooner "
                f"than the start of their ceil(n/L)-th window, (ceil(n/L) - 1) x P = {least:g} s after the first.",
            )
        self.row(step, "429 answers", sync.traffic.throttled, goal="0", met=sync.traffic.throttled == 0)
        failed = sync.traffic.failed + done["failed"]
        self.row(
            step,
            "failed requests (non-2xx other than 429) + failed writes",
            f"{sync.traffic.failed} + {done['failed']}",
            goal="0",
            met=failed == 0,
        )
        self.row(step, "API calls", sync.traffic.calls)
        self.row(
            step,
            "obs's own CPU (this process); the fake's CPU (its own)",
            f"{sync.obs_cpu:.2f} s; {sync.fake_cpu:.2f} s",
        )
        self.note(step, f"sync: {sync.traffic.per_endpoint()}; obs --verbose: {sync.verbose()}; {sync.split()}")

    def baseline(self, where: Org, plan: Command, monitor_ids: Sequence[int], dashboard_ids: Sequence[str]) -> None:
        options = self.options
        step = "5 baseline: GET per monitor"
        objects: list[tuple[Kind, int | str]] = [(MONITOR, i) for i in monitor_ids] + [
            (DASHBOARD, i) for i in dashboard_ids
        ]
        limit = options.baseline_limit
        if limit and options.rate_limit and limit > options.rate_limit:
            self.note(
                step,
                f"--baseline-limit {limit} lowered to the rate limit, {options.rate_limit}, "
                "so that the sample is not throttled",
            )
            limit = options.rate_limit
        sample = objects[:limit] if limit and limit < len(objects) else objects
        where.fresh_window()
        found = refresh(where, sample, options.baseline_concurrency)
        self.row(
            step,
            f"objects read ({options.baseline_concurrency} in flight, IDs from the seeding)",
            f"{len(sample):,} of {len(objects):,}",
        )
        self.row(
            step,
            "API calls (429 answers, failed GETs)",
            f"{found.traffic.calls:,} ({found.traffic.throttled}, {found.failed})",
        )
        if len(sample) < len(objects):
            wall = refresh_estimate(len(objects), found.wall / len(sample), options.rate_limit, options.period)
            calls = len(objects)  # without the 429s a throttled run would also draw
            extrapolated = ", extrapolated"
            self.row(
                step,
                f"wall for all {len(objects):,} (reads only), **extrapolated** "
                f"from {len(sample):,} GETs in {found.wall:.2f} s",
                wall,
                "s",
            )
            self.note(
                step,
                "extrapolation: at the measured pace per GET, with every full rate-limit budget but the last "
                "costing a whole period: (ceil(n/L) - 1) x P + (the rest) x (seconds per GET)",
            )
        else:
            wall, calls, extrapolated = found.wall, found.traffic.calls, ""
            self.row(step, "wall (reads only: no load, expand or diff)", wall, "s")
        self.row(step, f"baseline / obs: API calls{extrapolated}", f"{calls / plan.traffic.calls:,.0f} x")
        self.row(step, f"baseline / obs: wall{extrapolated}", f"{wall / plan.wall:,.1f} x")
        self.note(step, f"baseline: {found.traffic.per_endpoint()}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queues", type=int, default=1000, help="generated queues (default 1000)")
    parser.add_argument(
        "--latency", type=float, default=0.02, help="seconds the fake adds to every request (default 0.02)"
    )
    parser.add_argument(
        "--rate-limit", type=int, default=500, help="requests per period per endpoint group (default 500; 0: none)"
    )
    parser.add_argument("--period", type=float, default=10.0, help="seconds of a rate-limit window (default 10)")
    parser.add_argument("--creates", type=int, default=2000, help="monitors the first sync creates (default 2000)")
    parser.add_argument(
        "--baseline-concurrency",
        type=int,
        default=10,
        help="GETs in flight in the baseline (default 10, Terraform's parallelism)",
    )
    parser.add_argument(
        "--baseline-limit",
        type=int,
        default=None,
        metavar="N",
        help="GET only N objects in the baseline and extrapolate",
    )
    parser.add_argument("--skip-baseline", action="store_true", help="leave out step 5")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON instead of a Markdown table")
    options = parser.parse_args()
    load_before = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as scratch:
        bench = Bench(options, Path(scratch))
        definitions = fleet.write(Path(scratch) / "fleet", options.queues, subscription_dlqs=True)
        defs = load(definitions)
        bench.render(definitions, defs)
        desired = expand(defs, ENV)
        with org(options) as where:
            plan, monitor_ids, dashboard_ids = bench.no_change_plan(where, definitions, desired)
            if not options.skip_baseline:
                bench.baseline(where, plan, monitor_ids, dashboard_ids)
            bench.changed_thresholds(where, definitions, defs, desired)
        bench.initial_sync()
    machine = machine_info(options, load_before)
    rows = sorted(bench.rows, key=lambda r: r.step)  # stable: each step's rows keep their order
    notes = sorted(bench.notes, key=lambda n: n[0])
    if options.json:
        print(
            json.dumps(
                {
                    "machine": machine,
                    "options": vars(options),
                    "rows": [asdict(r) for r in rows],
                    "notes": [{"step": step, "note": text} for step, text in notes],
                },
                indent=2,
            )
        )
    else:
        sys.stdout.write(markdown(rows, machine, notes))
    return 0


if __name__ == "__main__":
    sys.exit(main())
