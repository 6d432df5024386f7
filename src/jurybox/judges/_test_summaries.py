"""Test-run summaries read from build tools' output: how many tests passed, failed, errored, were skipped.

Each tool prints its own closing line; this module knows pytest's, cargo's,
Maven Surefire's, Gradle's and the usual npm test runners' (node --test, Jest,
Vitest, Mocha). Colour codes are removed first. Output is agent output: only
whole-number counts are taken from it, from anchored patterns, and nothing in
it is run or evaluated.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

TOOLS = ("pytest", "npm", "maven", "gradle", "cargo")
"""The build tools whose summaries are read."""

_ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]")


@dataclass(frozen=True)
class TestSummary:
    """The counts a test run reported (zero where the tool does not report one).

    Attributes:
        passed: Tests that passed.
        failed: Tests that failed.
        errors: Tests (or collection) that errored: pytest errors, Surefire errors.
        skipped: Tests skipped, ignored or pending.
        source: The line the counts came from (the last one read).
    """

    __test__ = False  # not a pytest test class, whatever its name

    passed: int = 0
    failed: int = 0
    errors: int = 0
    skipped: int = 0
    source: str = ""

    def to_dict(self) -> dict[str, int]:
        return {"passed": self.passed, "failed": self.failed, "errors": self.errors, "skipped": self.skipped}


def read_summary(tool: str, output: str) -> TestSummary | None:
    """The summary ``tool`` printed in ``output``, or None when there is none to read."""
    text = _ANSI.sub("", output)
    return _READERS[tool](text)


_PYTEST_LINE = re.compile(r"^=*\s*((?:\d+ [a-z]+(?:, )?)+|no tests ran)\b.* in [\d.]+s\b.*$", re.MULTILINE)
_PYTEST_COUNT = re.compile(r"(\d+) (passed|failed|errors?|skipped|xfailed|xpassed)\b")


def _pytest(text: str) -> TestSummary | None:
    lines = _PYTEST_LINE.findall(text)
    if not lines:
        return None
    last = lines[-1]
    counts = {word: int(number) for number, word in _PYTEST_COUNT.findall(last)}
    return TestSummary(
        passed=counts.get("passed", 0) + counts.get("xpassed", 0),
        failed=counts.get("failed", 0),
        errors=counts.get("error", 0) + counts.get("errors", 0),
        skipped=counts.get("skipped", 0) + counts.get("xfailed", 0),
        source=last.strip(),
    )


_CARGO = re.compile(r"^test result: (?:ok|FAILED)\. (\d+) passed; (\d+) failed; (\d+) ignored;.*$", re.MULTILINE)


def _cargo(text: str) -> TestSummary | None:
    # One line per test binary (unit tests, each integration test file, doc tests): they add up.
    found = list(_CARGO.finditer(text))
    if not found:
        return None
    return TestSummary(
        passed=sum(int(m.group(1)) for m in found),
        failed=sum(int(m.group(2)) for m in found),
        skipped=sum(int(m.group(3)) for m in found),
        source=found[-1].group(0).strip(),
    )


_SUREFIRE = re.compile(
    r"Tests run: (\d+), Failures: (\d+), Errors: (\d+), Skipped: (\d+)(?:, Time elapsed|\s*$)", re.MULTILINE
)


def _maven(text: str) -> TestSummary | None:
    lines = list(_SUREFIRE.finditer(text))
    if not lines:
        return None
    # Surefire prints a line per test class ("Time elapsed") and then each module's total: the totals
    # add up across modules; without any total line, the class lines do.
    totals = [m for m in lines if "Time elapsed" not in m.group(0)]
    counted = totals or lines
    run, failed, errors, skipped = (sum(int(m.group(i)) for m in counted) for i in range(1, 5))
    return TestSummary(max(0, run - failed - errors - skipped), failed, errors, skipped, counted[-1].group(0).strip())


_GRADLE = re.compile(r"^(\d+) tests? completed(?:, (\d+) failed)?(?:, (\d+) skipped)?\s*$", re.MULTILINE)


def _gradle(text: str) -> TestSummary | None:
    found = list(_GRADLE.finditer(text))
    if not found:
        return None
    last = found[-1]
    completed, failed, skipped = (int(last.group(i) or 0) for i in (1, 2, 3))
    return TestSummary(max(0, completed - failed - skipped), failed, 0, skipped, last.group(0).strip())


_NODE_TEST = re.compile(r"^[#ℹ] (pass|fail|skipped|todo|cancelled) (\d+)\s*$", re.MULTILINE)
_JEST = re.compile(r"^Tests:\s+(.*\d+ total)\s*$", re.MULTILINE)
_VITEST = re.compile(r"^\s*Tests\s+(.*\(\d+\))\s*$", re.MULTILINE)
_MOCHA = re.compile(r"^\s*(\d+) (passing|failing|pending)\b", re.MULTILINE)
_WORD_COUNT = re.compile(r"(\d+) (passed|failed|skipped|todo|pending)")


def _npm(text: str) -> TestSummary | None:
    node = _NODE_TEST.findall(text)
    if node:
        counts = {word: int(number) for word, number in node}
        return TestSummary(
            counts.get("pass", 0),
            counts.get("fail", 0) + counts.get("cancelled", 0),
            0,
            counts.get("skipped", 0) + counts.get("todo", 0),
            f"node --test: {', '.join(f'{w} {n}' for w, n in node)}",
        )
    for pattern in (_JEST, _VITEST):
        lines = pattern.findall(text)
        if lines:
            words = {word: int(number) for number, word in _WORD_COUNT.findall(lines[-1])}
            skipped = words.get("skipped", 0) + words.get("todo", 0) + words.get("pending", 0)
            return TestSummary(words.get("passed", 0), words.get("failed", 0), 0, skipped, lines[-1].strip())
    mocha = _MOCHA.findall(text)
    if mocha:
        counts = {word: int(number) for number, word in mocha}
        source = ", ".join(f"{n} {w}" for n, w in mocha)
        return TestSummary(counts.get("passing", 0), counts.get("failing", 0), 0, counts.get("pending", 0), source)
    return None


_READERS: dict[str, Callable[[str], TestSummary | None]] = {
    "pytest": _pytest,
    "cargo": _cargo,
    "maven": _maven,
    "gradle": _gradle,
    "npm": _npm,
}
