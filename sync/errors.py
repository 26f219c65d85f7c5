"""Domain errors: everything the CLI boundary turns into one clear message and exit 1."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import ParamSpec, TypeVar

_P = ParamSpec("_P")
_T = TypeVar("_T")


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

    @property
    def place(self) -> tuple[str, int]:
        """Where it sorts: by file, then line; a problem of no file (a missing folder) first."""
        return self.file, self.line or 0


class ObsError(Exception):
    """An error the user can fix; carries one or more problems, and notes said after them (what was not
    checked, and why) that are no problems of their own."""

    def __init__(self, *problems: Problem, notes: Sequence[Problem] = ()) -> None:
        super().__init__("\n".join(p.render() for p in (*problems, *notes)))
        self.problems = problems
        self.notes = tuple(notes)

    def summary(self) -> str:
        """How many problems, in how many files: "3 problems in 2 files"."""
        count = len(self.problems)
        files = len({p.file for p in self.problems if p.file})
        text = f"{count} problem{'' if count == 1 else 's'}"
        return f"{text} in {files} file{'' if files == 1 else 's'}" if files else text

    @classmethod
    def of(cls, what: str, fix: str = "", file: str = "", line: int | None = None, key: str = "") -> ObsError:
        return cls(Problem(what=what, fix=fix, file=file, line=line, key=key))


class Problems:
    """Problems collected across many independent checks, so that one run reports them all.

    A check raises ObsError as usual; `attempt` runs it and keeps its problems instead of stopping, so each
    check that does not depend on another's result is attempted on its own."""

    def __init__(self) -> None:
        self.found: list[Problem] = []
        self.notes: list[Problem] = []  # said once, after the problems: what was not checked, and why

    def __bool__(self) -> bool:
        return bool(self.found)

    def add(self, *found: Problem | ObsError) -> None:
        for item in found:
            self.found.extend(item.problems if isinstance(item, ObsError) else (item,))
            for note in item.notes if isinstance(item, ObsError) else ():
                self.note(note)

    def note(self, problem: Problem) -> None:
        if problem not in self.notes:
            self.notes.append(problem)

    def attempt(self, check: Callable[_P, _T], *args: _P.args, **kwargs: _P.kwargs) -> _T | None:
        """What `check` returns, or None when it raised; its problems are kept."""
        try:
            return check(*args, **kwargs)
        except ObsError as exc:
            self.add(exc)
            return None

    def raise_any(self) -> None:
        """Raise every problem found, once each, sorted by file and line; then the notes."""
        if self.found:
            unique = sorted(dict.fromkeys(self.found), key=lambda p: p.place)
            raise ObsError(*unique, notes=self.notes)
