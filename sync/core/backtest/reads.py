"""Pure: the metric series each monitor reads, so the history fetched is exactly what the monitors need.

A metric monitor reads its query's metric queries; a burn-rate alert reads its SLO's slice queries; a composite
reads nothing itself, only through the monitors it combines."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from sync.core import composite_query, metric_query
from sync.core.metric_query import Leaf

# One metric query wherever it appears: in a monitor's query or in an SLO's named queries.
_LEAF = re.compile(r"(?:avg|max|min|sum):[A-Za-z_][\w.]*\{[^{}()\[\]]*\}(?:\.as_count\(\)|\.as_rate\(\))?")
_SLO_REF = re.compile(r"\$\{slo_id:([^}]+)\}")

Filter = tuple[str, tuple[tuple[str, str], ...]]  # (metric, tag filters): what one metric query selects


@dataclass(frozen=True)
class Reads:
    """What a monitor reads: metric queries, or for a composite the monitors it combines."""

    filters: tuple[Filter, ...] = ()
    leaves: tuple[Leaf, ...] = ()  # the metric queries as written: what a source that merges series is asked
    monitors: tuple[str, ...] = ()
    problem: str = ""  # why what it reads cannot be told


def reads(body: Mapping[str, Any], slos: Mapping[str, Mapping[str, Any]]) -> Reads:
    kind = body.get("type")
    query = str(body.get("query", ""))
    if kind == "composite":
        try:
            expr = composite_query.parse(query, (composite_query.PLACEHOLDER, composite_query.ID))
        except composite_query.CompositeError as exc:
            return Reads(problem=str(exc))
        return Reads(monitors=tuple(sorted(composite_query.references(expr))))
    text = query
    if kind == "slo alert":
        ref = _SLO_REF.search(query)
        slo = slos.get(ref.group(1)) if ref else None
        if slo is None:
            return Reads(problem="its SLO is not among this environment's SLOs")
        text = json.dumps(slo.get("sli_specification") or {})
    found: dict[Filter, None] = {}
    leaves: dict[Leaf, None] = {}
    for token in _LEAF.findall(text):
        try:
            leaf = metric_query.expression(token)
        except metric_query.QueryError as exc:
            return Reads(problem=str(exc))
        if isinstance(leaf, Leaf):
            found[(leaf.metric, leaf.tags)] = None
            leaves[leaf] = None
    if not found:
        return Reads(problem="it reads no metric query obs can fetch")
    return Reads(filters=tuple(sorted(found)), leaves=tuple(sorted(leaves, key=repr)))
