"""Find what the publisher logged about each failed message, near its publish time (Logs FilterLogEvents)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta

from sync.aws.core.failures import Failure
from sync.aws.core.publisher import Published, id_batches, or_pattern, parse_publisher_line
from sync.aws.reads.clients import Clients
from sync.aws.reads.logs import Progress, filter_events
from sync.definitions.model import PublisherLog

_MISSING = "fix publisher_log.log_group of the queue in queues.yaml"
_AROUND = timedelta(minutes=5)  # publishers log just before or after Publish returns


def lookup_published(
    clients: Clients,
    publishers: Sequence[PublisherLog],
    failures: Sequence[Failure],
    progress: Progress | None = None,
) -> dict[str, Published]:
    """Publisher records for the failed message ids, searched near each message's publish time."""
    timed: list[tuple[datetime, str]] = sorted(
        {(stamp, f.message_id) for f in failures if (stamp := f.published or f.logged) is not None}
    )
    wanted = {ident for _, ident in timed}
    found: dict[str, Published] = {}
    for publisher in publishers:
        for batch in id_batches(timed):
            start, end = batch[0][0] - _AROUND, batch[-1][0] + _AROUND
            pattern = or_pattern(ident for _, ident in batch)
            events = filter_events(
                clients, publisher.log_group, start, end, pattern=pattern, progress=progress, missing=_MISSING
            )
            for message, millis in events:
                parsed = parse_publisher_line(message, publisher)
                if parsed is None or parsed[0] not in wanted or parsed[0] in found:
                    continue
                logged = datetime.fromtimestamp(millis / 1000, tz=UTC) if millis is not None else None
                found[parsed[0]] = Published(parsed[0], parsed[1], publisher.log_group, logged)
    return found
