"""Pure: where the person on call looks for one queue: its dashboard preset to it, runbook and AWS consoles.

The same links end every monitor's message and make up `obs links`, so a page and the command agree.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from sync.core import placeholders
from sync.core.kinds import DASHBOARD, SLO, Kind
from sync.core.resources import Resource
from sync.definitions.model import Definitions, Environment
from sync.errors import ObsError
from sync.expand import urls
from sync.expand.naming import PlacedQueue, PlacedTopic, placed_queues


@dataclass(frozen=True)
class Board:
    """A dashboard of the environment that monitor messages link to."""

    key: str
    name: str
    variables: tuple[str, ...]  # the template variables it declares


@dataclass(frozen=True)
class Link:
    label: str
    url: str  # a URL, or with `command` a command line to run
    command: bool = False


def boards(defs: Definitions, env: Environment) -> tuple[Board, ...]:
    return tuple(
        Board(
            key=f"{env.name}/{template.name}",
            name=template.name,
            variables=tuple(str(v.get("name")) for v in template.body.get("template_variables") or ()),
        )
        for template in defs.dashboards
        if env.dashboards.get(template.name, True)
    )


def queue_links(
    env: Environment,
    placed: PlacedQueue,
    on: tuple[Board, ...],
    ids: Mapping[str, str],
    topics: tuple[PlacedTopic, ...] = (),
) -> list[Link]:
    """Runbook, dashboards, the queue, its DLQ and worker service; with `topics`, each topic's console,
    failure log and `obs trace` command. A dashboard without a known ID gets a placeholder."""
    region, account = env.region, env.account_id
    found = [Link("Runbook", placed.queue.runbook)]
    for board in on:
        variables = _preset(placed, topics, board)
        label = "Dashboard" if len(on) == 1 else f"Dashboard {board.name}"
        board_id = ids.get(board.key, placeholders.dashboard_placeholder(board.key))
        found.append(Link(label, urls.dashboard(env.site, board_id, variables)))
    found.append(Link("SQS queue", urls.sqs_queue(region, account, placed.sqs_name)))
    if placed.dlq_sqs_name:
        found.append(Link("DLQ", urls.sqs_queue(region, account, placed.dlq_sqs_name)))
    if placed.cluster and placed.service:
        found.append(Link("ECS service", urls.ecs_service(region, placed.cluster, placed.service)))
    for topic in topics:
        about = f" {topic.sns_name}" if len(topics) > 1 else ""
        group = urls.failure_log_group(region, account, topic.sns_name)
        found += [
            Link(f"SNS topic{about}", urls.sns_topic(region, topic.arn)),
            Link(
                f"Failed deliveries{about} (Logs Insights)",
                urls.logs_insights(region, group, urls.FAILURE_QUERY, urls.TRACE_SINCE_SECONDS),
            ),
            Link(f"Which messages failed{about}", trace_command(env.name, topic), command=True),
        ]
        if topic.subscription_dlq:
            found.append(Link(f"Subscription DLQ{about}", urls.sqs_queue(region, account, topic.subscription_dlq)))
    return found


def message_lines(
    env: Environment, placed: PlacedQueue, on: tuple[Board, ...], topic: PlacedTopic | None
) -> tuple[str, ...]:
    """The links that end a monitor's message: its queue's, and its topic's when it watches one."""
    return tuple(_line(link) for link in queue_links(env, placed, on, {}, (topic,) if topic else ()))


def _line(link: Link) -> str:
    if link.command:
        return f"{link.label}: `{link.url}`"
    if "*" in link.url:  # a bare URL would lose its asterisks to Markdown emphasis in the notification
        return f"{link.label}: [open]({link.url})"
    return f"{link.label}: {link.url}"


def trace_command(env: str, topic: PlacedTopic) -> str:
    """The command naming the failed messages and their cause; it also shows those parked in a subscription DLQ."""
    peek = " --peek-dlq" if topic.subscription_dlq else ""
    return f"obs trace --env {env} --topic {topic.sns_name} --since {urls.TRACE_SINCE_SECONDS // 3600}h{peek}"


def _preset(placed: PlacedQueue, topics: tuple[PlacedTopic, ...], board: Board) -> dict[str, str]:
    """The template variables queue, dlq, service and topic, where the dashboard declares them, set to the
    alerting queue's (the topic's only when there is one: a variable takes a single value here)."""
    one_topic = topics or placed.topics
    values = {
        "queue": placed.sqs_name,
        "dlq": placed.dlq_sqs_name,
        "service": placed.service,
        "topic": one_topic[0].sns_name if len(one_topic) == 1 else None,
    }
    return {name: value for name, value in values.items() if value and name in board.variables}


@dataclass(frozen=True)
class Page:
    """A monitor or dashboard and its page in Datadog; `url` is None while it does not exist yet."""

    key: str
    title: str
    id: str | None
    url: str | None


@dataclass(frozen=True)
class QueueSheet:
    name: str
    cls: str
    owner: str
    links: tuple[Link, ...]
    monitors: tuple[Page, ...]


@dataclass(frozen=True)
class Sheet:
    """Every link of an environment (or one queue of it): what `obs links` prints."""

    env: str
    app: str
    dashboards: tuple[Page, ...]
    queues: tuple[QueueSheet, ...]


def chosen(defs: Definitions, env: Environment, queue: str | None) -> tuple[PlacedQueue, ...]:
    """The environment's queues, or the one named."""
    placed = placed_queues(defs, env)
    if queue is None:
        return placed
    # An alert names the AWS queue (prod-critical), a runbook the logical one (critical): both find it.
    found = tuple(q for q in placed if queue in (q.name, q.sqs_name, q.dlq_sqs_name))
    if not found:
        names = [q.name for q in placed]
        close = difflib.get_close_matches(queue, names + [q.sqs_name for q in placed], n=3, cutoff=0.8)
        hint = f"did you mean {' or '.join(close)}? " if close else ""
        raise ObsError.of(f"no queue '{queue}' in {env.name}", f"{hint}use one of: {', '.join(names)}")
    return found


def sheet(
    defs: Definitions,
    env: Environment,
    desired: Sequence[Resource],
    ids: Mapping[tuple[Kind, str], str],
    placed: tuple[PlacedQueue, ...],
) -> Sheet:
    """The links of these queues of the environment, with the live IDs in `ids` (by kind and key)."""
    board_ids = {key: found for (kind, key), found in ids.items() if kind == DASHBOARD}
    on = boards(defs, env)

    def page(resource: Resource) -> Page:
        found = ids.get((resource.kind, resource.key))
        return Page(
            resource.key, resource.title, found, None if found is None else urls.page(resource.kind, env.site, found)
        )

    monitors: dict[str | None, list[Page]] = {}
    slos: dict[str | None, list[Link]] = {}
    for resource in desired:
        if resource.kind.notifies:
            monitors.setdefault(resource.queue, []).append(page(resource))
        if resource.kind == SLO:  # a placeholder for the ID until the SLO exists, as for dashboards
            slo_id = ids.get((SLO, resource.key), placeholders.placeholder(SLO.name, resource.key))
            slos.setdefault(resource.queue, []).append(Link("SLO", str(urls.page(SLO, env.site, slo_id))))
    queues = tuple(
        QueueSheet(
            name=q.name,
            cls=q.queue.cls,
            owner=q.queue.owner,
            links=(
                *queue_links(env, q, on, board_ids, q.topics),
                *slos.get(q.name, ()),
                Link("Its monitors", urls.queue_monitors(env.site, env.name, q.name)),
            ),
            monitors=tuple(monitors.get(q.name, ())),
        )
        for q in placed
    )
    dashboards = tuple(page(r) for r in desired if r.kind == DASHBOARD)
    return Sheet(env=env.name, app=urls.app(env.site), dashboards=dashboards, queues=queues)
