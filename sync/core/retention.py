"""Pure: how long a message parked in a dead-letter queue is kept, the one rule validation, the monitors and the
audit share. A standard queue's message keeps its first enqueue time when it moves to the DLQ, and expires the
DLQ's retention after it was first sent (SQS Developer Guide, "Using dead-letter queues"); FIFO queues restart
the clock when a message moves."""

from __future__ import annotations

MAX_RETENTION_SECONDS = 1_209_600  # 14 days, the most SQS keeps a message


def dlq_life(queue_seconds: int, dlq_seconds: int, fifo: bool) -> int:
    """The least time a parked message has left in the DLQ: a message of a standard queue may have spent all but
    its last moment in the queue before it was parked. Not positive: a parked message can expire at once."""
    return dlq_seconds if fifo else dlq_seconds - queue_seconds
