"""The kinds registry: one record per kind of Datadog object, and every side of obs registered for each."""

from __future__ import annotations

from sync.check import models
from sync.core.kinds import KINDS, named
from sync.datadog.client import APIS
from sync.datadog.reads import READERS

# name: (order, fixed, marker, links, notifies, validated, numeric_id, API path, JSON:API envelope)
EXPECTED = {
    "slo": (0, "type", "tags", False, False, False, False, "/api/v1/slo", None),
    "dashboard": (1, "layout_type", "description", True, False, False, False, "/api/v1/dashboard", None),
    "monitor": (2, "type", "tags", True, True, True, True, "/api/v1/monitor", None),
    "composite": (3, "type", "tags", True, True, False, True, "/api/v1/monitor", None),
    "downtime": (4, "", "message", False, False, False, False, "/api/v2/downtime", "downtime"),
    "slo-correction": (5, "slo_id", "description", True, False, False, False, "/api/v1/slo/correction", "correction"),
}


def test_each_kind_says_what_it_provides_and_is_registered_everywhere() -> None:
    found = {
        k.name: (
            k.order, k.fixed, k.marker, k.links, k.notifies, k.validated, k.numeric_id, APIS[k].path, APIS[k].envelope,
        )
        for k in KINDS
    }  # fmt: skip
    assert found == EXPECTED
    for kind in KINDS:
        assert named(kind.name) is kind and kind in READERS
        assert isinstance(models.problems(kind, {}), list)  # the client's model for its bodies is known
    # What others refer to by ID comes first: an SLO before its burn-rate alerts, widgets and corrections.
    assert [k.order for k in KINDS] == sorted({k.order for k in KINDS})
