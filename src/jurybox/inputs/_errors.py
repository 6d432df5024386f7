"""The error every input reader raises: the source, the line, where in the document, and what is wrong."""

from __future__ import annotations

from jurybox.inputs._lines import PathKey


class InputError(ValueError):
    """An input that cannot be read: unreadable, not YAML, over a limit, or a shape YAML values cannot take.

    Attributes:
        source: The file (or form field) the text came from.
        line: The 1-based line of the problem, when there is one.
        path: Where in the document, as keys and indexes (empty at the top or when unknown).
        problem: What is wrong, without the file and line.
        syntax: True when the text is not YAML at all (callers say "invalid YAML: ...").
    """

    def __init__(
        self, source: str, line: int | None, problem: str, *, path: PathKey = (), syntax: bool = False
    ) -> None:
        self.source = source
        self.line = line
        self.path = path
        self.problem = problem
        self.syntax = syntax
        super().__init__(f"{source}:{line}: {problem}" if line is not None else f"{source}: {problem}")
