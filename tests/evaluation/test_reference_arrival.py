"""The alert and recovery minutes of Datadog's delay arithmetic, worked through by hand for an SQS age stall and
a DLQ message, checked against the model: crawled CloudWatch data at 900 s and 0 s of evaluation_delay, and
Metric Streams at 0 s and 300 s.

Shared facts, and where they are published:
- the window at t is [t - D - W, t - D] ("at 7:00 ... evaluates data from 6:40 to 6:45" for D = 900, last_5m):
  https://docs.datadoghq.com/monitors/configuration/
- the crawler polls every 10 minutes, 1-minute CloudWatch data is available about 2 minutes after its minute,
  and queueing can add up to 5 minutes: https://docs.datadoghq.com/integrations/guide/cloud-metric-delay/
- Metric Streams deliver with "only a two to three minute latency":
  https://docs.datadoghq.com/integrations/guide/aws-cloudwatch-metric-streams-with-kinesis-data-firehose/
- a queue waking from six idle hours reports up to 15 minutes late:
  https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-monitoring-using-cloudwatch.html
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from sync.core.evaluation.monitor import run
from sync.core.evaluation.series import CRAWLER_DELAY, STREAM_DELAY, Segment, Series, arrivals, points
from sync.core.evaluation.states import ALERT
from tests.evaluation.worked_cases import crawled, first, monitor, recovered_at, series, states

T = 100  # consumers stop with a message just enqueued: the true age is 60 * (minutes since T) seconds
AGE = "max(last_5m):max:m{queuename:foo} > 300"
HEALTHY = 10.0  # the age while consumers keep up


def age(statistic: str, until: int = 200, resume: int | None = None) -> dict[int, float]:
    """One point per minute m, covering [m, m + 1): its Minimum, Average or Maximum of 60 * (s - T)."""
    offset = {"Minimum": 0.0, "Average": 0.5, "Maximum": 1.0}[statistic]
    stalled = range(T, until if resume is None else resume)
    return {m: (60 * (m - T + offset) if m in stalled else HEALTHY) for m in range(until)}


def model_crawler(minute: int) -> int:
    return minute + CRAWLER_DELAY


def model_stream(minute: int) -> int:
    return minute + STREAM_DELAY


@pytest.mark.parametrize(("statistic", "breach"), [("Average", T + 5), ("Maximum", T + 5), ("Minimum", T + 6)])
def test_the_first_breaching_minute_depends_on_the_cloudwatch_statistic(statistic: str, breach: int) -> None:
    """Average puts minute T+4 at 270 s and T+5 at 330 s; Maximum puts T+4 at exactly 300 s, not above; Minimum
    first exceeds 300 s at T+6. With data as it happens (no delay, no lag), the alert follows one minute later.
    Metric monitor aggregation: https://docs.datadoghq.com/monitors/types/metric/"""
    found = states(monitor(AGE, 0), series(age(statistic), lambda m: m), 200)
    assert first(found) == breach + 1


@pytest.mark.parametrize("phase", range(10))
@pytest.mark.parametrize("queueing", range(6))
def test_crawled_at_900_s_the_age_alert_comes_16_minutes_after_the_breach(phase: int, queueing: int) -> None:
    """Crawler, D = 900: ALERT at T+21 (T+20 with a closed window end), whatever the crawl phase and up to 5
    minutes of queueing: the window's end reaches the breach 16 minutes after it, and arrival (at most 16 minutes
    here) does not bind. https://docs.datadoghq.com/monitors/guide/troubleshooting-no-data/ recommends the 900 s."""
    data = series(age("Average"), lambda m: crawled(m, phase, queueing))
    assert first(states(monitor(AGE, 900), data, 200)) == T + 21
    assert first(states(monitor(AGE, 900), data, 200, open_end=False)) in (T + 20, T + 21)


def test_crawled_at_900_s_the_model_pages_at_the_pessimistic_end_of_the_range() -> None:
    """The model's crawler arrival (17 minutes, available + a full crawl cycle + queueing) makes the page T+22,
    the latest of the T+20 ... T+22 range; the Minimum statistic gives T+22 even with a prompt crawl.
    https://docs.datadoghq.com/integrations/guide/cloud-metric-delay/"""
    for open_end in (True, False):
        assert first(states(monitor(AGE, 900), series(age("Average"), model_crawler), 200, open_end)) == T + 22
    prompt = series(age("Minimum"), lambda m: crawled(m, phase=(T + 8) % 10))
    assert first(states(monitor(AGE, 900), prompt, 200)) == T + 22


@pytest.mark.parametrize("phase", range(10))
def test_crawled_at_0_s_the_crawl_phase_decides_between_7_and_16_minutes(phase: int) -> None:
    """Crawler, D = 0: ALERT at the first crawl at or after the breach's availability (T+5 + 2), so T+7 ... T+16.
    https://docs.datadoghq.com/integrations/guide/cloud-metric-delay/"""
    found = states(monitor(AGE, 0), series(age("Average"), lambda m: crawled(m, phase)), 200)
    assert first(found) == crawled(T + 5, phase)
    assert T + 7 <= crawled(T + 5, phase) <= T + 16


def test_crawled_at_0_s_the_window_is_empty_between_crawls() -> None:
    """D = 0 with the crawler evaluates in bursts: right after a crawl at c the window [c - 5, c) holds the
    points c - 5 ... c - 2; once its oldest arrived point leaves it, every point in it is still unarrived until
    the next crawl, and the state is kept. https://docs.datadoghq.com/monitors/guide/adjusting-no-data-alerts-for-metric-monitors/"""
    data = series(age("Average"), lambda m: crawled(m, phase=0))
    steps = {s.t: s for s in run("k", monitor(AGE, 0), [data], 200, True, set()).steps}
    empty = {t for t, s in steps.items() if s.outcome is not None and s.outcome.empty}
    for c in (60, 70, 150):
        assert not empty & set(range(c, c + 4)) and set(range(c + 4, c + 10)) <= empty
    assert steps[155].state == ALERT  # empty windows keep the state


def test_crawled_at_0_s_the_model_never_guarantees_the_page() -> None:
    """With arrival as late as the crawler allows (17 minutes) no point is ever inside a 5-minute window that ends
    now: a page by the crawl phase's luck is not one a test can rely on.
    https://docs.datadoghq.com/integrations/guide/cloud-metric-delay/"""
    assert first(states(monitor(AGE, 0), series(age("Average"), model_crawler), 200)) is None


@pytest.mark.parametrize(("delay", "open_end_alert", "closed_end_alert"), [(0, T + 8, T + 8), (300, T + 11, T + 10)])
def test_streamed_the_age_alert_comes_3_to_6_minutes_after_the_breach(
    delay: int, open_end_alert: int, closed_end_alert: int
) -> None:
    """Metric Streams, D = 0: the 3-minute arrival binds, T+8. D = 300: the window's end reaches the breach at
    T+5 + 6, T+11 (T+10 closed). https://docs.datadoghq.com/integrations/guide/aws-cloudwatch-metric-streams-with-kinesis-data-firehose/"""
    data = series(age("Average"), model_stream)
    assert first(states(monitor(AGE, delay), data, 200)) == open_end_alert
    assert first(states(monitor(AGE, delay), data, 200, open_end=False)) == closed_end_alert


@pytest.mark.parametrize("arrives_after", range(15, 21))
def test_five_minute_cloudwatch_data_crawled_at_900_s_alerts_by_minute_25(arrives_after: int) -> None:
    """A 5-minute period: the point covering [T+5, T+10) arrives 15-20 minutes after its stamp, so the alert
    comes at T+21 ... T+25. https://docs.datadoghq.com/integrations/guide/cloud-metric-delay/"""
    five_minutely = {m: v for m, v in age("Average").items() if m % 5 == 0}
    data = series(five_minutely, lambda m: m + arrives_after)
    assert first(states(monitor(AGE, 900), data, 200)) == max(T + 21, T + 5 + arrives_after)


def test_a_step_to_600_s_at_minute_5_pages_at_20_to_22_crawled_and_8_to_12_streamed() -> None:
    """The age steps to 600 s at minute 5: crawled at 900 s the page is at minute 20-22, so "page by minute 12"
    must fail; streamed with D at most 360 s it is at minute 8-12.
    https://docs.datadoghq.com/integrations/guide/cloud-metric-delay/"""
    step = {m: 600.0 if m >= 5 else HEALTHY for m in range(60)}
    for open_end in (True, False):
        assert 20 <= (first(states(monitor(AGE, 900), series(step, model_crawler), 60, open_end)) or 0) <= 22
        for delay in (0, 60, 300, 360):
            assert 8 <= (first(states(monitor(AGE, delay), series(step, model_stream), 60, open_end)) or 0) <= 12


def test_the_age_alert_recovers_d_plus_w_after_consumers_resume() -> None:
    """Consumers resume at R with messages still queued: the last breaching point is R - 1 and `max` recovers at
    R + D + W = R + 20 (D = 15, W = 5), under both readings of the window's end.
    https://docs.datadoghq.com/monitors/guide/recovery-thresholds/"""
    resume = T + 30
    data = series(age("Average", resume=resume), model_crawler)
    for open_end in (True, False):
        assert recovered_at(states(monitor(AGE, 900), data, 200, open_end), after=T + 22) == resume + 20


def test_a_drained_queue_keeps_the_age_alert_until_timeout() -> None:
    """The queue drains at R: the age metric stops ("Reported if the queue contains at least one active
    message"), the window goes empty and the evaluation is skipped, so the ALERT sticks until timeout_h.
    https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-available-cloudwatch-metrics.html
    https://docs.datadoghq.com/monitors/configuration/ (auto-resolve)"""
    drained = {m: v for m, v in age("Average", until=T + 30).items()}
    data = series(drained, model_crawler)
    assert states(monitor(AGE, 900), data, 400)[400] == ALERT
    timed_out = states(monitor(AGE, 900, timeout_h=1), data, 400)
    # The last point, T+29, leaves the open window [t - 20, t - 15) at t = T+50: the clock starts there.
    assert first(timed_out, "OK", after=T + 22) == T + 50 + 60


VISIBLE = "aws.sqs.approximate_number_of_messages_visible"
DLQ = f"sum(last_10m):sum:{VISIBLE}{{queuename:foo}}.as_count() > 0"
TD = 500  # the first message is moved to the DLQ


def dlq(until: int = 700, emptied: int | None = None, since: int = 0) -> dict[int, float]:
    """The DLQ's visible count: zero while it is active and empty, one from TD (to `emptied`)."""
    return {m: 1.0 if TD <= m < (emptied or until) else 0.0 for m in range(since, until)}


def visible(values: dict[int, float], arrive: Callable[[int], int]) -> Series:
    return series(values, arrive, metric=VISIBLE)


@pytest.mark.parametrize("phase", range(10))
def test_an_active_dlq_crawled_at_900_s_pages_16_minutes_after_the_message(phase: int) -> None:
    """Active DLQ, crawler, D = 900: T_d + 16 (15 ... 17); the model's arrival gives T_d + 17.
    https://docs.datadoghq.com/integrations/guide/cloud-metric-delay/"""
    assert first(states(monitor(DLQ, 900), visible(dlq(), lambda m: crawled(m, phase)), 700)) == TD + 16
    assert first(states(monitor(DLQ, 900), visible(dlq(), model_crawler), 700)) == TD + 17


def test_a_dlq_waking_from_idle_crawled_at_900_s_still_pages_by_minute_32() -> None:
    """A DLQ idle for more than 6 hours: its first 15 minutes of points arrive too late for any window, but the
    message stays, and the next points page at T_d + 32 at the latest (with queueing).
    https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-monitoring-using-cloudwatch.html"""
    stamped = points([Segment(TD, None), Segment(700, 1.0)])
    woke = arrivals(stamped, CRAWLER_DELAY, sqs=True, idle_before=True, used=set())
    found = states(monitor(DLQ, 900), visible(stamped, woke.__getitem__), 700)
    assert first(found) == TD + 32


@pytest.mark.parametrize("phase", range(10))
def test_a_dlq_crawled_at_0_s_pages_at_the_first_crawl(phase: int) -> None:
    """Crawler, D = 0: active, T_d + 2 ... T_d + 11 (the first crawl after availability); idle for 6 hours,
    T_d + 17 ... T_d + 26 (15 minutes later still). https://docs.datadoghq.com/integrations/guide/cloud-metric-delay/"""
    active = first(states(monitor(DLQ, 0), visible(dlq(), lambda m: crawled(m, phase)), 700))
    assert active == crawled(TD, phase) and TD + 2 <= (active or 0) <= TD + 11

    def waking(m: int) -> int:
        return crawled(m, phase, available_after=17 if m < TD + 15 else 2)

    idle = first(states(monitor(DLQ, 0), visible(dlq(since=TD), waking), 700))
    assert TD + 17 <= (idle or 0) <= TD + 26


@pytest.mark.parametrize(("delay", "alert"), [(0, TD + 3), (300, TD + 6)])
def test_a_streamed_dlq_pages_3_or_6_minutes_after_the_message(delay: int, alert: int) -> None:
    """Metric Streams: T_d + 3 at D = 0, T_d + 6 at D = 300.
    https://docs.datadoghq.com/integrations/guide/aws-cloudwatch-metric-streams-with-kinesis-data-firehose/"""
    assert first(states(monitor(DLQ, delay), visible(dlq(), model_stream), 700)) == alert


def test_a_one_minute_spike_counts_only_if_it_arrives_before_the_window_passes_it() -> None:
    """A single point counts only if it arrives by m + D + W: at D = 900, W = 10 the deadline is m + 25, so an
    active source (17) is safe and a waking one (32) is missed; at D = 0 a crawl after m + 10 misses it.
    https://docs.datadoghq.com/integrations/guide/cloud-metric-delay/"""
    spike = {m: (1.0 if m == TD else 0.0) for m in range(700)}
    assert first(states(monitor(DLQ, 900), visible(spike, model_crawler), 700)) == TD + 17
    assert first(states(monitor(DLQ, 900), visible(spike, lambda m: m + CRAWLER_DELAY + 15), 700)) is None
    assert first(states(monitor(DLQ, 0), visible(spike, lambda m: m + 10), 700)) == TD + 10
    assert first(states(monitor(DLQ, 0), visible(spike, lambda m: m + 11), 700)) is None


def test_an_emptied_dlq_recovers_26_minutes_later() -> None:
    """The DLQ is emptied at E: its last positive point is E and it recovers at E + D + W + 1 = E + 26, on the
    zeros an active queue reports.
    https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-available-cloudwatch-metrics.html"""
    emptied = TD + 60
    data = visible(dlq(emptied=emptied + 1), model_crawler)
    for open_end in (True, False):
        assert recovered_at(states(monitor(DLQ, 900), data, 700, open_end), after=TD + 17) == emptied + 26


def test_a_count_spike_under_the_legacy_options_keeps_its_alert_until_timeout() -> None:
    """A sparse count (SNS's failed notifications) leaves empty windows between failures: the legacy options skip
    those evaluations, so the ALERT stays until timeout_h. https://docs.datadoghq.com/monitors/configuration/"""
    failed = "aws.sns.number_of_notifications_failed"
    query = f"sum(last_10m):sum:{failed}{{topicname:t}}.as_count() > 0"
    data = series({TD: 1.0}, model_crawler, metric=failed, tags={"topicname": "t"})
    assert states(monitor(query, 900), data, 900)[900] == ALERT
    # The point leaves the open window [t - 25, t - 15) at TD + 26: the hour runs from there.
    assert first(states(monitor(query, 900, timeout_h=1), data, 900), "OK", after=TD + 17) == TD + 26 + 60
