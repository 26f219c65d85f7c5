"""What the preview's warnings need from a revision's definition files: each environment's Datadog site and
queue naming, and the queue inventory.

Read from the YAML as written rather than through the loader, so a base written for an older obs still
answers (its own code renders it; these facts only name orgs and queues).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sync.definitions.load import INVENTORY
from sync.definitions.model import DEFAULT_NAMING
from sync.definitions.source import read
from sync.errors import ObsError


@dataclass(frozen=True)
class Facts:
    sites: Mapping[str, str] = field(default_factory=dict)  # environment -> Datadog site
    naming: Mapping[str, str] = field(default_factory=dict)  # environment -> queue name pattern
    queues: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)  # logical name -> inventory entry

    def physical(self, env: str, queue: str) -> str:
        """The AWS queue name the monitors of `queue` watch in `env`."""
        pattern = self.naming.get(env, DEFAULT_NAMING)
        return pattern.replace("[[env]]", env).replace("[[name]]", queue)


EMPTY = Facts()


def read_facts(folder: Path) -> Facts:
    """The facts of a definitions folder; what cannot be read is left out (the loader reports it)."""
    sites, naming = {}, {}
    for path in sorted((folder / "environments").glob("*.y*ml")):
        data = _yaml(path)
        name = data.get("name")
        if not isinstance(name, str):
            continue
        datadog, names = data.get("datadog"), data.get("naming")
        if isinstance(datadog, dict) and isinstance(datadog.get("site"), str):
            sites[name] = datadog["site"]
        if isinstance(names, dict) and isinstance(names.get("queue"), str):
            naming[name] = names["queue"]
    entries = _yaml(folder / INVENTORY).get("queues")
    queues = {str(entry["name"]): entry for entry in entries or [] if isinstance(entry, dict) and "name" in entry}
    return Facts(sites, naming, queues)


def _yaml(path: Path) -> dict[str, Any]:
    """The file through the hardened loader (limits on depth, size and aliases); {} when it refuses it or
    the file is missing: loading the revision reports why."""
    try:
        data = read(path, str(path)).data
    except ObsError:
        return {}
    return data if isinstance(data, dict) else {}
