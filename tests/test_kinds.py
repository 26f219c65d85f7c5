"""The kinds registry: one record per kind of Datadog object, and each says everything obs does with it.

Per kind, a table of what its record provides (listed, read, found by key, written, validated, ordered,
diffed, named, linked), then each piece exercised against the fake Datadog with a body of the example: a kind
missing a piece, or whose piece does not work, fails here.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from contextlib import closing
from typing import Any

import pytest
from datadog_api_client import ApiClient, Configuration

from sync.check import models
from sync.core import placeholders
from sync.core.diff import diff
from sync.core.kinds import KINDS, Kind, named
from sync.core.resources import Resource
from sync.datadog import listing
from sync.datadog.client import Datadog, client_class
from sync.datadog.credentials import endpoint
from sync.definitions.model import Definitions
from sync.expand import urls
from sync.expand.desired import expand

from .fakedd import FakeDatadog

# name: (listed: list method, filter, marker; written: path, envelope; validated: model, by the API in a dry run;
#        ordered; diffed: fixed field; named: title field; linked: page)
EXPECTED: Mapping[str, tuple[Any, ...]] = {
    "slo": (
        ("list_slos", "ours", "tags"), ("/api/v1/slo", None),
        ("v1.model.service_level_objective_request.ServiceLevelObjectiveRequest", False),
        0, "type", "name", "/slo/manage?slo_id={id}",
    ),
    "dashboard": (
        ("list_dashboards", "none", "description"), ("/api/v1/dashboard", None),
        ("v1.model.dashboard.Dashboard", False), 1, "layout_type", "title", "/dashboard/{id}",
    ),
    "monitor": (
        ("list_monitors", "env", "tags"), ("/api/v1/monitor", None), ("v1.model.monitor.Monitor", True),
        2, "type", "name", "/monitors/{id}",
    ),
    "composite": (
        ("list_monitors", "env", "tags"), ("/api/v1/monitor", None), ("v1.model.monitor.Monitor", False),
        3, "type", "name", "/monitors/{id}",
    ),
    "downtime": (
        ("list_downtimes", "none", "message"), ("/api/v2/downtime", "downtime"),
        ("v2.model.downtime_create_request_attributes.DowntimeCreateRequestAttributes", False),
        4, "", "message", "/monitors/downtimes?id={id}",
    ),
    "slo-correction": (
        ("list_slo_correction", "none", "description"), ("/api/v1/slo/correction", "correction"),
        ("v1.model.slo_correction_create_request_attributes.SLOCorrectionCreateRequestAttributes", False),
        5, "slo_id", "description", "",
    ),
}  # fmt: skip


def provides(k: Kind) -> tuple[Any, ...]:
    return (
        (k.listing.operation, k.listing.filters, k.listing.marker),
        (k.api.path, k.api.envelope),
        (k.model.name, k.api.validates),
        k.order,
        k.diff.fixed,
        k.title_field,
        k.page,
    )


def test_each_kind_says_what_it_provides() -> None:
    assert {k.name: provides(k) for k in KINDS} == EXPECTED
    # What others refer to by ID comes first: an SLO before its burn-rate alerts, widgets and corrections.
    assert [k.order for k in KINDS] == sorted({k.order for k in KINDS})
    assert all(named(k.name) is k for k in KINDS)


@pytest.mark.parametrize("kind", KINDS, ids=str)
def test_the_client_offers_every_method_the_record_names(kind: Kind) -> None:
    client = client_class(kind.api.client)(ApiClient(Configuration()))  # type: ignore[no-untyped-call]
    api, verbs = kind.api, ["create", kind.api.update_verb, kind.api.delete_verb]
    names = [f"{verb}_{api.noun}" for verb in verbs] + [kind.listing.operation]
    names += [kind.listing.detail] if kind.listing.detail else []
    names += [f"validate_{api.noun}", f"validate_existing_{api.noun}"] if api.validates else []
    assert [n for n in names if not callable(getattr(client, n, None))] == []


def _one(desired: list[Resource], kind: Kind) -> Resource:
    """The kind's first resource in the example's prod: every kind has one there."""
    return next(r for r in desired if r.kind == kind)


def _write(client: Datadog, resource: Resource, desired: list[Resource], ids: dict[placeholders.Ref, str]) -> str:
    """Creates the resource, after the objects its body names by ID (as a sync orders them)."""
    by_ref = {(r.kind.name, r.key): r for r in desired}
    for ref in sorted(placeholders.unresolved(resource.body) - set(ids)):
        assert by_ref[ref].kind.order < resource.kind.order  # what it names is written before it
        ids[ref] = _write(client, by_ref[ref], desired, ids)
    made = str(client.create(resource.kind, placeholders.resolve(resource.body, ids))["id"])
    ids[resource.kind.name, resource.key] = made
    return made


@pytest.mark.parametrize("kind", KINDS, ids=str)
def test_each_kind_is_validated_written_listed_found_diffed_named_and_linked(
    kind: Kind, dd: FakeDatadog, example: Definitions
) -> None:
    desired = list(expand(example, "prod"))
    resource = _one(desired, kind)
    assert models.problems(kind, resource.body) == []  # validated
    assert models.problems(kind, {**resource.body, "frobnicate": 1}) != []
    with closing(Datadog(endpoint(os.environ, "datadoghq.com", "prod"))) as client:
        ids: dict[placeholders.Ref, str] = {}
        made = _write(client, resource, desired, ids)  # written
        (found,) = [o for o in listing.listed(client, kind, "prod", desired) if o.key == resource.key]  # listed
        assert found.id == made and found.kind is kind and found.created  # read: owned, with its creation time
        assert [o.id for o in listing.find(client, kind, resource.key)] == [made]  # found by key
        sent = placeholders.resolve(resource.body, ids)
        assert diff(kind, sent, found.body) == ()  # diffed: the server's rewrites are no change
        assert diff(kind, {**sent, kind.title_field: "another"}, found.body) != ()
    assert kind.title(found.body) == resource.title != ""  # named
    page = urls.page(kind, "datadoghq.com", made)  # linked
    assert page == (f"https://app.datadoghq.com{kind.page.format(id=made)}" if kind.page else None)
