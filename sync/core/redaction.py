"""Pure: secrets hidden in text that goes out (errors, logs, a proxy's page echoing our headers). Kept apart from
the Datadog client, so that the error boundary of every command has it without loading the client."""

from __future__ import annotations

from collections.abc import Iterable

FRAGMENT = 8  # any run of this many characters of a key counts as the key


class Redactor:
    """Hides every fragment of FRAGMENT or more characters of each secret, wherever it starts."""

    def __init__(self, secrets: Iterable[str]) -> None:
        self._windows = {s[i : i + FRAGMENT] for s in secrets if len(s) >= FRAGMENT for i in range(len(s) - 7)}

    def __call__(self, text: str) -> str:
        if not self._windows:
            return text
        hidden = [False] * len(text)
        for start in range(len(text) - FRAGMENT + 1):
            if text[start : start + FRAGMENT] in self._windows:
                hidden[start : start + FRAGMENT] = [True] * FRAGMENT
        if not any(hidden):
            return text
        out, previous = [], False
        for char, secret in zip(text, hidden, strict=True):
            if not secret:
                out.append(char)
            elif not previous:
                out.append("***")
            previous = secret
        return "".join(out)
