"""Pure: the modelled assumptions, named so a report can say which ones a verdict relied on."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Assumption:
    code: str
    text: str


def order(assumption: Assumption) -> tuple[str, int]:
    """U1, U2, ..., U19, then the model's own (T1, ...)."""
    return ("0" if assumption.code.startswith("U") else assumption.code[0], int(assumption.code[1:]))


class Refused(Exception):
    """A monitor the model cannot evaluate without guessing: the published behaviour gives no safe reading."""


class Unmodelled(Refused):
    """A monitor whose value comes from an algorithm Datadog does not publish (forecasts, anomalies, outliers).
    `monitor: any` and lists of monitors leave it out, with a note; naming it alone is still an error."""


# U: behaviour Datadog does not document, read the way a test is least likely to pass by accident; T: the model's own.
WINDOW_EDGES = Assumption(
    "U1",
    "window edges are undocumented: every scenario runs with the window end open and closed, and an expectation "
    "passes only under both (the later alert and the later recovery count)",
)
NO_BACKFILL = Assumption(
    "U2", "an evaluation sees only points that have arrived by then; past windows are never judged again"
)
CRAWLER_ARRIVAL = Assumption(
    "U6",
    "every scenario runs at the earliest, middle and latest arrival the sources allow, and an expectation passes "
    "only under all three: crawled points 2, 10 and 17 min after their minute (available at 2, then a 10-minute "
    "crawl cycle and up to 5 minutes of queueing), streamed points 2, 3 and 3 min",
)
SNS_PERIOD = Assumption(
    "U5",
    "SNS may report in 1- or 5-minute periods: a scenario with topic series runs under both, a 5-minute point "
    "holding the period's sum and arriving 10, 15 or 20 min after its stamp (7 or 8 streamed)",
)
QUEUE_WAKE = Assumption(
    "U7",
    "an SQS queue idle for 6 hours or more reports its first 15 minutes of points 0, 8 or 15 minutes later than "
    "usual (with the earliest, middle and latest arrival)",
)
SQS_COUNTERS_GAUGES = Assumption(
    "U4",
    "aws.sqs.number_of_messages_* are of in-app type gauge (.as_count() changes nothing), and whether they hold "
    "per-minute counts or per-second values is undocumented: a scenario with counter series runs under both (a "
    "minute's count, and that count / 60)",
)
SQS_COUNTER_UNIT = SQS_COUNTERS_GAUGES
ECS_API_COUNTS = Assumption(
    "U24",
    "ECS task counts (aws.ecs.service.running, desired, pending) come from the ECS API: polled like the crawler "
    "under every metrics source, and a service with no task may report 0 or nothing; a scenario whose task "
    "counts reach 0 runs under both",
)
PER_TASK = Assumption(
    "T4",
    "a service metric over N tasks: CloudWatch's base name is their mean, .maximum the busiest task and .minimum "
    "the idlest; a per-task metric is one series per task, tagged task_arn and availability_zone",
)
NO_DATA_TIMEFRAME = Assumption(
    "U9", "no_data_timeframe defaults to 2 x the window and counts from the first empty evaluation"
)
EMPTY_COUNT_WINDOW = Assumption(
    "U10", "an empty window is evaluated as 0 only under on_missing_data: default; the legacy options skip it"
)
RECOVERY_LANDING = Assumption(
    "U14", "past critical_recovery the monitor is judged against warning again, so it may land in WARN"
)
RENOTIFY = Assumption(
    "U15",
    "renotify has no cap unless renotify_occurrences; it is suppressed in a downtime and its clock restarts on "
    "every state change; a renotification that reaches the pager is a page (the responder may have resolved the "
    "incident) unless the scenario says the incident is still open",
)
TIMEOUT_CLOCK = Assumption(
    "U16", "the timeout_h clock starts at the first empty evaluation; at expiry the monitor goes OK"
)
COMPOSITE_LAG = Assumption(
    "U17", "a composite is recomputed every minute from its monitors' states of one minute before"
)
DOWNTIME_SCOPE = Assumption("U18", "a downtime with a group scope other than * does not mute a simple-alert monitor")
SLO_LATE_DATA = Assumption(
    "U19",
    "SLO alerts are evaluated every minute on arrived data only; a time slice whose points have not arrived counts "
    "as uptime",
)
SLICE_MEAN = Assumption("T1", "a time slice's value is the mean of its points")
CHANGE_ALIGNMENT = Assumption(
    "T2",
    "a change alert subtracts, at each minute with a point now, the point N earlier; where that one is missing it is "
    "interpolated as in gauge arithmetic (up to 5 minutes), and otherwise the evaluation is skipped, as NaN in "
    "arithmetic is (a queue waking from idle does not count as a change from nothing)",
)
CORRECTED_SLICE = Assumption(
    "T3",
    "an SLO correction repeats at the same wall-clock time in its timezone, and a time slice any minute of which it "
    "covers counts as uptime",
)
