"""Problems found in a calibration's input, each naming file, line and field."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass


@dataclass(frozen=True)
class Problem:
    """One thing wrong with an input file.

    Attributes:
        source: The file (or ``<input>``).
        line: 1-based line, when known.
        field: The field or column, when known.
        message: What is wrong and, where it helps, what is allowed.
    """

    source: str
    line: int | None
    field: str
    message: str

    def __str__(self) -> str:
        where = self.source
        if self.line is not None:
            where += f":{self.line}"
        if self.field:
            where += f":{self.field}"
        return f"{where}: {self.message}"


class CalibrationInputError(ValueError):
    """A labelled set, a recorded-output file or a judge spec could not be used.

    Every problem found is listed (``problems``), so one run shows all of them;
    nothing is ever half-loaded.
    """

    def __init__(self, problems: Iterable[Problem]) -> None:
        self.problems = tuple(problems)
        super().__init__("\n".join(str(problem) for problem in self.problems))

    @classmethod
    def one(cls, source: str, line: int | None, field: str, message: str) -> CalibrationInputError:
        return cls([Problem(source, line, field, message)])
