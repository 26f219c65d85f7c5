"""A stateful fake of Datadog's v1 monitors and dashboards API, with faults, for tests through the real client."""

from .common import Rejected
from .faults import Faults
from .server import LOST_RESPONSE, TIMED_OUT, FakeDatadog, Request

__all__ = ["LOST_RESPONSE", "TIMED_OUT", "FakeDatadog", "Faults", "Rejected", "Request"]
