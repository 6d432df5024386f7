"""The one error a suite, case or seed file raises: it names the file, the line and the field."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Problem:
    """One thing wrong with a file: where it is and what is wrong."""

    file: str
    line: int | None
    field: str
    message: str

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}" if self.line is not None else self.file
        return f"{where}: {self.field}: {self.message}" if self.field else f"{where}: {self.message}"


class SuiteError(ValueError):
    """A suite or seed file is malformed. Loading stops; nothing half-loaded is returned.

    Attributes:
        problems: Every problem found, each with file, line and field.
    """

    def __init__(self, problems: Sequence[Problem]) -> None:
        if not problems:
            raise ValueError("SuiteError needs at least one problem")
        self.problems = tuple(problems)
        if len(self.problems) == 1:
            text = str(self.problems[0])
        else:
            text = f"{len(self.problems)} problems:\n" + "\n".join(f"  {p}" for p in self.problems)
        super().__init__(text)

    @classmethod
    def at(cls, file: str | Path, line: int | None, field: str, message: str) -> SuiteError:
        """A SuiteError with a single problem."""
        return cls([Problem(str(file), line, field, message)])

    @property
    def file(self) -> str:
        return self.problems[0].file

    @property
    def line(self) -> int | None:
        return self.problems[0].line

    @property
    def field(self) -> str:
        return self.problems[0].field
