"""Python source compared by meaning of its syntax tree, not its formatting."""

from __future__ import annotations

import ast
import difflib

from jurybox.core import TIER_DETERMINISTIC, Context, Judgment, judge_factory
from jurybox.judges._base import DeterministicJudge

MAX_DIFF_LINES = 20


def _strip_docstrings(tree: ast.AST) -> None:
    """Docstrings are documentation, like comments: leave them out of the comparison."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            body = node.body
            if (
                body
                and isinstance(body[0], ast.Expr)
                and isinstance(body[0].value, ast.Constant)
                and isinstance(body[0].value.value, str)
            ):
                node.body = body[1:] or [ast.Pass()]


def canonical(source: str, *, ignore_docstrings: bool, what: str) -> str:
    """Source re-printed from its syntax tree: formatting and comments gone."""
    try:
        tree = ast.parse(source)
    except SyntaxError as exc:
        raise SyntaxError(f"{what} is not valid Python: {exc.msg} (line {exc.lineno})") from exc
    if ignore_docstrings:
        _strip_docstrings(tree)
    return ast.unparse(tree)


class _SamePython(DeterministicJudge):
    def __init__(self, expected: str | None, ignore_docstrings: bool, name: str) -> None:
        super().__init__(name)
        self.ignore_docstrings = ignore_docstrings
        self.expected = (
            canonical(expected, ignore_docstrings=ignore_docstrings, what="expected source") if expected else None
        )

    def check(self, context: Context) -> Judgment:
        if self.expected is not None:
            expected = self.expected
        elif context.expected is not None:
            expected = canonical(context.expected, ignore_docstrings=self.ignore_docstrings, what="Context.expected")
        else:
            raise ValueError("same_python needs expected source: pass it or set Context.expected")
        try:
            actual = canonical(context.output, ignore_docstrings=self.ignore_docstrings, what="output")
        except SyntaxError as exc:
            return Judgment.failed(False, str(exc))
        if actual == expected:
            return Judgment.passed(True, "same syntax tree (formatting and comments ignored)")
        diff = list(difflib.unified_diff(expected.splitlines(), actual.splitlines(), "expected", "output", lineterm=""))
        shown = "\n".join(diff[:MAX_DIFF_LINES])
        return Judgment.failed(False, f"syntax trees differ:\n{shown}", metadata={"diff": "\n".join(diff)})


@judge_factory(tier=TIER_DETERMINISTIC)
def same_python(
    expected: str | None = None, *, ignore_docstrings: bool = False, name: str | None = None
) -> DeterministicJudge:
    """Pass when the output is Python with the same syntax tree as ``expected``.

    Formatting, comments and quote style are ignored; names, literals and
    structure are not. The failure shows a diff of the normalized sources.

    Args:
        expected: The expected source; None uses ``Context.expected``.
        ignore_docstrings: Leave docstrings out of the comparison.
        name: The judge's name in reports.

    Raises:
        SyntaxError: ``expected`` is not valid Python (checked when built).
    """
    return _SamePython(expected, ignore_docstrings, name or "same_python")
