"""Which failed destinations have a subscription DLQ, and what is lost without one (pure)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from sync.aws.core.events import queue_name_of
from sync.aws.core.facts import Subscription
from sync.aws.core.failures import Failure
from sync.aws.core.target import TraceTarget


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
