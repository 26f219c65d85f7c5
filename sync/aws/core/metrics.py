"""The SNS failure metrics as plain data: where failures cluster, and the period CloudWatch still keeps (pure)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

FAILED = "NumberOfNotificationsFailed"
REDRIVEN = "NumberOfNotificationsRedrivenToDlq"
NOT_REDRIVEN = "NumberOfNotificationsFailedToRedriveToDlq"  # lost although the subscription has a DLQ
FILTERED_INVALID = "NumberOfNotificationsFilteredOut-InvalidAttributes"  # dropped before delivery, never logged
METRICS = {"failed": FAILED, "redriven": REDRIVEN, "not_redriven": NOT_REDRIVEN, "filtered_invalid": FILTERED_INVALID}
# CloudWatch keeps 1-minute data 15 days, 5-minute data 63 days, hourly data 455 days
_RETENTION = ((timedelta(days=15), 60), (timedelta(days=63), 300))
_HOURLY = 3600


@dataclass(frozen=True)
class MetricSummary:
    """Non-zero points of the SNS failure metrics, oldest first."""

    period_s: int
    failed: tuple[tuple[datetime, float], ...]
    redriven: tuple[tuple[datetime, float], ...]
    not_redriven: tuple[tuple[datetime, float], ...] = ()
    filtered_invalid: tuple[tuple[datetime, float], ...] = ()

    @property
    def total_failed(self) -> float:
        return sum(v for _, v in self.failed)

    @property
    def total_redriven(self) -> float:
        return sum(v for _, v in self.redriven)

    @property
    def total_not_redriven(self) -> float:
        return sum(v for _, v in self.not_redriven)

    @property
    def total_filtered_invalid(self) -> float:
        return sum(v for _, v in self.filtered_invalid)


@dataclass(frozen=True)
class Cluster:
    """Consecutive periods with failures: where they bunch up."""

    start: datetime
    last: datetime  # start of the last period in the cluster
    total: float
    peak: float


def clusters(points: tuple[tuple[datetime, float], ...], period_s: int) -> tuple[Cluster, ...]:
    out: list[Cluster] = []
    for stamp, value in sorted(points):
        if out and stamp - out[-1].last <= timedelta(seconds=period_s):
            prev = out[-1]
            out[-1] = Cluster(prev.start, stamp, prev.total + value, max(prev.peak, value))
        else:
            out.append(Cluster(stamp, stamp, value, value))
    return tuple(out)


def period_for(start: datetime, now: datetime) -> int:
    """The finest period CloudWatch still keeps for a window starting at `start`; GetMetricData pages the rest."""
    age = now - start
    return next((period for kept, period in _RETENTION if age <= kept), _HOURLY)


def period_text(period_s: int) -> str:
    return f"{period_s // 3600} h" if period_s % 3600 == 0 else f"{period_s // 60} min"
