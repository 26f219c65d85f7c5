"""Pure: a resource's key, the stable name obs gives each object it owns and writes into its ownership marker.

Its forms, as sync.expand writes them:

    env/template                               a dashboard (an on-call dashboard too)
    env/queue/metric                           a monitor or composite; an ad-hoc downtime
    env/queue/metric/topic                     a monitor of one topic
    env/queue/slo-<name>                       an SLO
    env/queue/metric/maintenance/<window>      a planned window's downtime
    env/queue/slo/maintenance/<window>         a planned window's SLO correction

A key read back from a live object comes from a marker someone may have edited: `Key.parse` answers None for
text that is no key at all, and the named parts answer None where the key's form has no such part.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

MAINTENANCE = "maintenance"  # the part that marks a window's downtime or correction
_KEY = re.compile(r"[^\s/]+(?:/[^\s/]+)*")  # parts joined by '/': one match checks them all


@dataclass(frozen=True, order=True)
class Key:
    parts: tuple[str, ...]

    def __post_init__(self) -> None:
        joined = "/".join(p if isinstance(p, str) else "" for p in self.parts)
        if not (self.parts and _KEY.fullmatch(joined) and joined.count("/") == len(self.parts) - 1):
            raise ValueError(f"not a resource key: {self.parts!r} (parts are non-empty, without spaces or '/')")

    @classmethod
    def parse(cls, text: str) -> Key | None:
        """The key `text` spells, or None when it spells none (an empty part, a space, ...)."""
        if not _KEY.fullmatch(text):
            return None
        # The match checked every part: built without __post_init__ checking them again (a fleet's expansion
        # parses tens of thousands of keys).
        key = object.__new__(cls)
        object.__setattr__(key, "parts", tuple(text.split("/")))
        return key

    @classmethod
    def of(cls, text: str) -> Key:
        """The key of a resource obs expanded itself: one that does not parse is a bug in obs, not bad input."""
        found = cls.parse(text)
        if found is None:
            raise ValueError(f"not a resource key: {text!r}")
        return found

    @classmethod
    def from_file_stem(cls, stem: str) -> Key | None:
        """The key whose `file_stem` this is."""
        return cls.parse(stem.replace(".", "/"))

    def __str__(self) -> str:
        return "/".join(self.parts)

    @property
    def env(self) -> str:
        return self.parts[0]

    @property
    def queue(self) -> str | None:
        """The queue of a key of a queue's resource (three parts or more); None for a dashboard's."""
        return self.parts[1] if len(self.parts) >= 3 else None

    @property
    def metric(self) -> str | None:
        """The metric of a monitor's or downtime's key; `slo-<name>` of an SLO's, `slo` of a correction's."""
        return self.parts[2] if len(self.parts) >= 3 else None

    @property
    def topic(self) -> str | None:
        """The topic of a monitor of one topic."""
        return self.parts[3] if len(self.parts) == 4 else None

    @property
    def window(self) -> str | None:
        """The maintenance window of a window's downtime or SLO correction."""
        return self.parts[4] if len(self.parts) == 5 and self.parts[3] == MAINTENANCE else None

    @property
    def maintenance(self) -> tuple[str, str, str] | None:
        """(queue, metric, window) of a window's downtime or SLO correction (whose metric part is `slo`); None
        for a key of any other form."""
        if self.window is None:
            return None
        queue, metric, _, window = self.parts[1:]
        return queue, metric, window

    @property
    def name(self) -> str:
        """The last part: a dashboard's template, a monitor's metric (or topic), a window."""
        return self.parts[-1]

    @property
    def parent(self) -> Key | None:
        """The key without its last part (env/queue of env/queue/metric); None for a key of one part."""
        return Key(self.parts[:-1]) if len(self.parts) > 1 else None

    def child(self, part: str) -> Key:
        return Key((*self.parts, part))

    @property
    def file_stem(self) -> str:
        """The name `obs render` gives the key's file, without `.json`: the parts joined by dots."""
        return ".".join(self.parts)


def key(*parts: str) -> Key:
    return Key(parts)


def env_of(text: str) -> str:
    """The environment a key names, its first part, even of a key that does not parse: a live object whose marker
    someone damaged after the environment still belongs to that environment (and is deleted as none desired)."""
    return text.partition("/")[0]
