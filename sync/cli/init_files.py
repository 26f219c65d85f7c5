"""The files `obs init` writes, as text: pure, so that what a new definitions folder holds is read in one place."""

from __future__ import annotations

import re

ENV_NAME = re.compile(r"[a-z][a-z0-9-]{0,29}")
# Environments by these names page people; every other one posts both audiences to chat.
_PAGING = ("prod", "production")

CATALOGUE = """\
# The metrics and the on-call dashboard come from the catalogue shipped with obs: an upgrade of obs brings
# its fixes (CHANGELOG.md lists them with their effect on paging). Change only what differs here, e.g.
#   overrides:
#     depth: {thresholds: {critical: 5000, warning: 2000}}   # a threshold, in every environment
#     worker_cpu: {enabled: false}                          # a metric you do not want
# Your classes are named like the catalogue's (short, long, feature); to use your own names, say which one
# each behaves as:
#   classes: {critical: short, bulk: long}
use: standard
"""

QUEUES = """\
# The queue inventory: each queue once, for every environment (environments/ name them in AWS).
# Replace the three examples with your queues. Each scenario in scenarios/ names one: give it one of yours of
# the same class, or delete it.

# Who this definitions set is in a Datadog org shared with other teams: obs marks every object it writes with
# it and reads and touches only objects marked with it.
namespace: NAMESPACE

classes:
  short:
    description: Short jobs (most finish within seconds); paged on the oldest message's age against the SLO.
    max_processing_seconds: 60
  long:
    description: Jobs that may run for minutes; no age SLO, watched by their backlog against the workers.
    max_processing_seconds: 900
  feature:
    description: Isolated queues that idle at zero workers and start only when work arrives.
    max_processing_seconds: 300

queues:
  - name: orders
    class: short
    description: User-facing work that must start within seconds.
    slo_seconds: 60
    worker: {cluster: jobs, service: orders-worker, min_tasks: 2, max_tasks: 20}
    dlq: {name: orders-dlq, max_receive_count: 3, retention_seconds: 1209600}
    topics:
      - {name: order-events}
    runbook: https://runbooks.example.com/jobs/orders
    owner: platform

  - name: reports
    class: long
    description: Exports that may run for minutes.
    retention_seconds: 864000  # 10 days: its DLQ keeps a message parked late in its life 4 more
    worker: {cluster: jobs, service: reports-worker, min_tasks: 1, max_tasks: 5}
    dlq: {name: reports-dlq, max_receive_count: 3, retention_seconds: 1209600}
    runbook: https://runbooks.example.com/jobs/reports
    owner: platform

  - name: imports
    class: feature
    description: A tenant's bulk import; idles at zero workers.
    worker: {cluster: jobs, service: imports-worker, min_tasks: 0, max_tasks: 10}
    dlq: {name: imports-dlq, max_receive_count: 3, retention_seconds: 1209600}
    runbook: https://runbooks.example.com/jobs/imports
    owner: platform
"""

ENVIRONMENT = """\
# Environment {name}: where its queues live and who hears its alerts. Replace the account and the handles.
name: {name}
# Add sqs_counters (counts or per_second) once Metrics Summary has told you which: backlog_draining needs it.
aws: {{account_id: "123456789012", region: {region}}}
datadog: {{site: {site}}}
naming:
  queue: {name}-[[name]]
  topic: {name}-[[name]]
  cluster: {name}-[[name]]
  service: {name}-[[name]]
# The catalogue sends each severity to an audience: page (people on call) or chat.
notify:
{notify}tags: ["service:jobs"]
"""

SCENARIOS = {
    "short-consumers-stall.yaml": """\
# The workers of a queue of the catalogue's class short stop consuming: the oldest message ages a second per
# second. Someone must be paged within half an hour (crawled AWS metrics arrive up to 17 minutes late).
# `queue:` names one of your queues of that class (one whose class catalogue.yaml maps to short).
name: consumers stall on a short queue
queue: orders
incident_at: 60
duration: 300
series:
  - metric: aws.sqs.approximate_age_of_oldest_message
    of: queue
    shape:
      - {until: 60, value: 4}
      - {until: 240, ramp: [4, 10800]}
      - {until: 300, ramp: [10, 2]}
  - metric: aws.sqs.approximate_number_of_messages_visible
    of: queue
    shape:
      - {until: 60, value: 20}
      - {until: 240, ramp: [20, 3600]}
      - {until: 300, ramp: [400, 5]}
  - metric: aws.sqs.number_of_messages_deleted
    of: queue
    shape: [{until: 60, value: 300}, {until: 240, gap: true}, {until: 300, value: 600}]
expect:
  - {monitor: any, pages: {within: 30}}
  - {monitor: dlq, notifies: none}
""",
    "long-steady-stays-quiet.yaml": """\
# A queue of the catalogue's class long on an ordinary day: a steady trickle of work, kept up with. Nobody
# is woken. `queue:` names one of your queues of that class (one whose class catalogue.yaml maps to long).
name: steady work on a long queue stays quiet
queue: reports
incident_at: 60
duration: 240
series:
  - metric: aws.sqs.approximate_age_of_oldest_message
    of: queue
    shape: [{until: 240, value: 120}]
  - metric: aws.sqs.approximate_number_of_messages_visible
    of: queue
    shape: [{until: 240, value: 3}]
  - metric: aws.sqs.approximate_number_of_messages_not_visible
    of: queue
    shape: [{until: 240, value: 2}]
  - metric: aws.sqs.number_of_messages_deleted
    of: queue
    shape: [{until: 240, value: 2}]
expect:
  - {monitor: any, pages: never}
""",
    "feature-idle-stays-quiet.yaml": """\
# A queue of the catalogue's class feature idles at zero workers with nothing to do: that is normal, and
# pages no one. `queue:` names one of your queues of that class (one whose class catalogue.yaml maps to feature).
name: an idle feature queue stays quiet
queue: imports
incident_at: 60
duration: 240
series:
  - metric: aws.sqs.approximate_age_of_oldest_message
    of: queue
    shape: [{until: 240, value: 0}]
  - metric: aws.sqs.approximate_number_of_messages_visible
    of: queue
    shape: [{until: 240, value: 0}]
  - metric: aws.sqs.approximate_number_of_messages_not_visible
    of: queue
    shape: [{until: 240, value: 0}]
expect:
  - {monitor: any, pages: never}
""",
}

GITIGNORE = """\
.venv/
__pycache__/
# obs render --out and obs plan --out write here; approved plans travel as CI artifacts, not commits.
rendered/
*.plan.json
# obs backtest keeps the metric history it read here.
.obs-cache/
"""

WORKFLOW = """\
# Pull requests: validate, test and preview every environment offline (the preview goes to the job summary).
# Merges to main: sync each environment; give each GitHub environment required reviewers where a person
# must approve (its DD_API_KEY and DD_APP_KEY secrets live there).
name: obs

on:
  pull_request:
  push:
    branches: [main]
  workflow_dispatch:

permissions:
  contents: read

jobs:
  check:
    if: github.event_name == 'pull_request'
    runs-on: ubuntu-latest
    timeout-minutes: 20
    steps:
      - uses: actions/checkout@11bd71901bbe5b1630ceea73d27597364c9af683 # v4.2.2
        with:
          fetch-depth: 0 # obs diff reads the base revision from git history
          persist-credentials: false
      - uses: actions/setup-python@a26af69be951a213d495a4c3e4e4022e16d87065 # v5.6.0
        with:
          python-version: "3.11"
      - run: pip install -r requirements.txt
      - run: obs validate
      - run: obs test
      - name: Preview every environment against the base
        env:
          BASE_REF: ${{{{ github.base_ref }}}}
        run: obs diff --base "$(git merge-base "origin/$BASE_REF" HEAD)" --format markdown >> "$GITHUB_STEP_SUMMARY"

  sync:
    if: github.event_name != 'pull_request'
    runs-on: ubuntu-latest
    timeout-minutes: 60
    strategy:
      max-parallel: 1 # one environment after the other, in this order
      matrix:
        env: {envs}
    environment: ${{{{ matrix.env }}}}
    concurrency:
      group: obs-sync-${{{{ matrix.env }}}}
    steps:
      - uses: actions/checkout@11bd71901bbe5b1630ceea73d27597364c9af683 # v4.2.2
        with:
          persist-credentials: false
      - uses: actions/setup-python@a26af69be951a213d495a4c3e4e4022e16d87065 # v5.6.0
        with:
          python-version: "3.11"
      - run: pip install -r requirements.txt
      - run: obs sync --env "$OBS_ENV" --yes
        env:
          OBS_ENV: ${{{{ matrix.env }}}}
          DD_API_KEY: ${{{{ secrets.DD_API_KEY }}}}
          DD_APP_KEY: ${{{{ secrets.DD_APP_KEY }}}}
"""

DRIFT = """\
# Every morning, each environment's live org is compared with main's definitions; drift shows in the job
# summary and fails the job. Each <env>-plan GitHub environment holds read-only application keys.
name: obs drift

on:
  schedule:
    - cron: "17 6 * * *"
  workflow_dispatch:

permissions:
  contents: read

jobs:
  drift:
    runs-on: ubuntu-latest
    timeout-minutes: 30
    strategy:
      fail-fast: false
      matrix:
        env: {envs}
    environment: ${{{{ matrix.env }}}}-plan
    steps:
      - uses: actions/checkout@11bd71901bbe5b1630ceea73d27597364c9af683 # v4.2.2
        with:
          persist-credentials: false
      - uses: actions/setup-python@a26af69be951a213d495a4c3e4e4022e16d87065 # v5.6.0
        with:
          python-version: "3.11"
      - run: pip install -r requirements.txt
      - run: obs plan --env "$OBS_ENV" --detailed-exitcode --format markdown >> "$GITHUB_STEP_SUMMARY"
        env:
          OBS_ENV: ${{{{ matrix.env }}}}
          DD_API_KEY: ${{{{ secrets.DD_API_KEY }}}}
          DD_APP_KEY: ${{{{ secrets.DD_APP_KEY }}}}
"""


def files(envs: list[str], site: str, region: str, version: str, namespace: str) -> dict[str, str]:
    """Each file of a new definitions folder by its path in it; `version` pins the obs that wrote it."""
    out = {
        "catalogue.yaml": CATALOGUE,
        "queues.yaml": QUEUES.replace("NAMESPACE", namespace, 1),  # its flow mappings keep .format out
        **{f"environments/{env}.yaml": environment(env, site, region) for env in envs},
        **{f"scenarios/{name}": text for name, text in SCENARIOS.items()},
        ".gitignore": GITIGNORE,
        # Pinned: an upgrade of obs (and of its catalogue) is a reviewed change like any other.
        "requirements.txt": f"obs=={version}\n" if version else "obs\n",
        ".github/workflows/obs.yml": WORKFLOW.format(envs=_flow(envs)),
        ".github/workflows/obs-drift.yml": DRIFT.format(envs=_flow(envs)),
    }
    return dict(sorted(out.items()))


def namespace_of(folder: str) -> str:
    """A namespace from a folder's name (`Payments Jobs` -> payments-jobs): lowercase, single inner dashes."""
    words = re.findall(r"[a-z0-9]+", folder.lower())
    name = "-".join(words).lstrip("0123456789-")[:40].rstrip("-")
    return name or "jobs"


def environment(name: str, site: str, region: str) -> str:
    if name in _PAGING:
        notify = '  page: ["@pagerduty-jobs-oncall"]\n  chat: ["@slack-jobs-alerts"]\n'
    else:
        notify = f'  # Nobody is paged from {name}: both audiences post to chat.\n  page: ["@slack-jobs-{name}"]\n'
        notify += f'  chat: ["@slack-jobs-{name}"]\n'
    return ENVIRONMENT.format(name=name, site=site, region=region, notify=notify)


def _flow(envs: list[str]) -> str:
    """A YAML flow list; environment names need no quotes (ENV_NAME)."""
    return "[" + ", ".join(envs) + "]"
