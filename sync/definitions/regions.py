"""AWS regions as the installed botocore knows them, read from its partitions data: no network, no client.

The schema checks a region's shape only; `eu-wset-1` has that shape and would make every query and link
of the environment point at nothing."""

from __future__ import annotations

import difflib
import importlib.util
import json
from functools import cache
from pathlib import Path

from sync.definitions.source import KeyPath, Source


@cache
def known() -> frozenset[str]:
    """Every region of every partition botocore's data/partitions.json lists; empty when it cannot be read
    (then no region is refused). The file is located without importing botocore, which is slow to import
    and a client library the offline commands do not load."""
    spec = importlib.util.find_spec("botocore")
    folders = list(spec.submodule_search_locations or ()) if spec is not None else []
    for folder in folders:
        try:
            data = json.loads((Path(folder) / "data" / "partitions.json").read_text())
        except (OSError, ValueError):
            continue
        return frozenset(
            region
            for partition in data.get("partitions", ())
            for region in partition.get("regions", {})
            if not region.endswith("-global")  # a partition's global endpoint, not a region queues live in
        )
    return frozenset()


def check(source: Source, at: KeyPath, region: str) -> None:
    regions = known()
    if regions and region not in regions:
        # Stricter than other names' suggestions: most regions differ from another in a character or two.
        close = difflib.get_close_matches(region, sorted(regions), n=1, cutoff=0.8)
        fix = f"did you mean '{close[0]}'?" if close else "use an AWS region such as us-east-1"
        raise source.error(
            at,
            f"unknown AWS region '{region}'",
            f"{fix} (a region newer than the installed boto3 needs an upgrade of boto3)",
        )
