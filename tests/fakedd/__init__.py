"""A stateful fake of Datadog's v1 monitors, dashboards and SLOs API, with faults, for tests through the real client."""

from .common import Rejected
from .faults import LOST, Faults, Targeted
from .server import LATE_COMMIT, LOST_RESPONSE, PROXY_PAGE, TIMED_OUT, FakeDatadog, Request

__all__ = [
    "LATE_COMMIT",
    "LOST",
    "LOST_RESPONSE",
    "PROXY_PAGE",
    "TIMED_OUT",
    "FakeDatadog",
    "Faults",
    "Rejected",
    "Request",
    "Targeted",
]
