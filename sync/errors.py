"""Domain errors: everything the CLI boundary turns into one clear message and exit 1."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Problem:
    """One thing wrong with the input: where, what, and how to fix it."""

    what: str
    fix: str = ""
    file: str = ""
    line: int | None = None
    key: str = ""

    def render(self) -> str:
        where = self.file
        if where and self.line is not None:
            where = f"{where}:{self.line}"
        if self.key:
            where = f"{where}: {self.key}" if where else self.key
        text = f"{where}: {self.what}" if where else self.what
        return f"{text}: {self.fix}" if self.fix else text


class ObsError(Exception):
    """An error the user can fix; carries one or more problems."""

    def __init__(self, *problems: Problem) -> None:
        super().__init__("\n".join(p.render() for p in problems))
        self.problems = problems

    @classmethod
    def of(cls, what: str, fix: str = "", file: str = "", line: int | None = None, key: str = "") -> ObsError:
        return cls(Problem(what=what, fix=fix, file=file, line=line, key=key))
