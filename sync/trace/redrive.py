"""Which failed destinations have a subscription DLQ, what those DLQs hold, and what is lost without one."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from sync.errors import ObsError
from sync.trace.aws import Clients
from sync.trace.dlq import DlqMessage, peek
from sync.trace.events import queue_name_of
from sync.trace.facts import Subscription
from sync.trace.failures import Failure
from sync.trace.target import TraceTarget


@dataclass(frozen=True)
class Redrive:
    """The DLQ of the subscription to one queue, or why it is not known."""

    queue_arn: str
    dlq_arn: str  # "" when the subscription has none, or when that is not known
    known: bool
    why: str = ""  # why it could not be determined


def redrives(
    target: TraceTarget, queue_arns: Iterable[str], subs: Mapping[str, Subscription], unlisted: str
) -> dict[str, Redrive]:
    """Queue ARN -> its subscription's DLQ: the definitions first, the live subscription otherwise."""
    # a subscription DLQ must be in the topic's account and region, so a declared name is enough
    declared = {d.queue_arn: target.queue_arn(d.subscription_dlq) for d in target.destinations if d.subscription_dlq}
    out: dict[str, Redrive] = {}
    for arn in sorted(set(queue_arns)):
        sub = subs.get(arn)
        if arn in declared:
            out[arn] = Redrive(arn, declared[arn], known=True)
        elif sub is not None:
            out[arn] = Redrive(arn, sub.dlq_arn, known=not sub.unread, why=sub.unread)
        else:
            why = unlisted or "the topic has no confirmed subscription to it now"
            out[arn] = Redrive(arn, "", known=False, why=why)
    return out


def loss_notes(failures: Iterable[Failure], dlqs: Mapping[str, Redrive]) -> list[str]:
    """Where failed messages are gone for good, said only when it is known; doubt is said as doubt."""
    notes = []
    for arn in sorted({f.destination for f in failures if not f.retried}):
        redrive, queue = dlqs.get(arn), queue_name_of(arn)
        if redrive is not None and redrive.known and not redrive.dlq_arn:
            notes.append(
                f"the subscription to {queue} has no DLQ: its failed messages are gone; republish them "
                "from the publisher and set a RedrivePolicy on the subscription"
            )
        elif redrive is None or not redrive.known:
            why = redrive.why if redrive is not None else "not looked up"
            notes.append(
                f"could not determine whether the subscription to {queue} has a DLQ ({why}); "
                "without one its failed messages are gone"
            )
    return notes


def peek_dlqs(clients: Clients, dlqs: Mapping[str, Redrive], limit: int, notes: list[str]) -> dict[str, DlqMessage]:
    """SNS message id -> its copy in a DLQ, from every known DLQ; a DLQ that cannot be read becomes a note."""
    parked: dict[str, DlqMessage] = {}
    for dlq_arn in sorted({r.dlq_arn for r in dlqs.values() if r.dlq_arn}):
        try:
            seen = peek(clients, dlq_arn, limit)
        except ObsError as exc:
            notes.append(f"DLQ {queue_name_of(dlq_arn)} not peeked: {exc}")
            continue
        if seen.note:
            notes.append(seen.note)
        unmatched = 0
        for message in seen.messages:
            if message.sns_message_id:
                parked.setdefault(message.sns_message_id, message)
            else:
                unmatched += 1
        if unmatched:
            notes.append(f"DLQ {seen.dlq}: {unmatched} raw-delivery messages carry no SNS message id to match")
    return parked
