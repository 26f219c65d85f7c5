"""Overlays: how a later layer of definitions changes an earlier one."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

Overlay = Mapping[str, Any]


def deep_merge(base: Mapping[str, Any], overlay: Mapping[str, Any]) -> dict[str, Any]:
    """Overlay wins; mappings merge key by key; an explicit null removes the key."""
    out = dict(base)
    for key, value in overlay.items():
        if value is None:
            out.pop(key, None)
        elif isinstance(value, Mapping) and isinstance(out.get(key), Mapping):
            out[key] = deep_merge(out[key], value)
        else:
            out[key] = value
    return out
