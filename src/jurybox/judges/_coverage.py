"""A judge on a coverage report in the workspace: enough lines and branches covered, overall and per file.

Two formats are read, the ones CI tools already write: coverage.py's JSON
(``coverage json``) and Cobertura XML (``coverage xml``, JaCoCo and Istanbul
converters, gcovr, cargo-llvm-cov --cobertura). The report is agent output like
any other, so it is read with limits: a size cap, no DTDs or entities in XML,
numbers range-checked, and every problem named with the file and the field.
"""

from __future__ import annotations

import fnmatch
import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from xml.etree import ElementTree

from jurybox.core import TIER_DETERMINISTIC, Check, Context, Judgment, judge_factory, read_json
from jurybox.judges._base import DeterministicJudge
from jurybox.judges._files import check_relative, workspace_of

MAX_REPORT_BYTES = 64 * 1024 * 1024
"""A coverage report larger than this is refused (a whole monorepo's report is a few MB)."""

_DTD = re.compile(rb"<!(DOCTYPE|ENTITY)", re.IGNORECASE)


class CoverageReportError(ValueError):
    """A coverage report that cannot be read: the message names the file and the field."""


@dataclass(frozen=True)
class FileCoverage:
    """Coverage of one source file (or the whole report), as counts.

    Attributes:
        path: The source file as the report names it ("" for the totals).
        lines: Statements (coverage.py) or lines (Cobertura) that can run.
        lines_covered: Those that ran.
        branches: Branch destinations; 0 when the report measured none.
        branches_covered: Those taken.
    """

    path: str
    lines: int
    lines_covered: int
    branches: int = 0
    branches_covered: int = 0

    @property
    def line_percent(self) -> float:
        return 100.0 if self.lines == 0 else 100.0 * self.lines_covered / self.lines

    @property
    def branch_percent(self) -> float | None:
        return None if self.branches == 0 else 100.0 * self.branches_covered / self.branches


@dataclass(frozen=True)
class CoverageReport:
    """A parsed report: the totals and each file."""

    totals: FileCoverage
    files: tuple[FileCoverage, ...]
    format: str


def read_coverage(path: Path) -> CoverageReport:
    """Read a coverage.py JSON or Cobertura XML report (chosen by content, not by name).

    Raises:
        CoverageReportError: unreadable, too large, malformed, or numbers out of range.
    """
    try:
        size = path.stat().st_size
    except OSError as exc:
        raise CoverageReportError(f"{path}: cannot read the coverage report ({exc.strerror})") from exc
    if size > MAX_REPORT_BYTES:
        raise CoverageReportError(f"{path}: the coverage report is {size:,} bytes, more than {MAX_REPORT_BYTES:,}")
    data = path.read_bytes()
    start = data.lstrip()[:1]
    if start == b"{":
        return _from_json(path, data)
    if start == b"<":
        return _from_cobertura(path, data)
    raise CoverageReportError(f"{path}: not a coverage.py JSON or Cobertura XML report")


def _from_json(path: Path, data: bytes) -> CoverageReport:
    try:
        document = read_json(data, max_nodes=None)  # a big project's report is big: only its depth is limited
    except (ValueError, UnicodeDecodeError) as exc:
        raise CoverageReportError(f"{path}: invalid JSON ({exc})") from exc
    if not isinstance(document, dict) or not isinstance(document.get("files"), dict):
        raise CoverageReportError(f"{path}: field 'files' is missing: not a coverage.py JSON report")
    files = []
    for name, entry in document["files"].items():
        summary = entry.get("summary") if isinstance(entry, dict) else None
        if not isinstance(summary, dict):
            raise CoverageReportError(f"{path}: field 'files.{name}.summary' is missing")
        files.append(_json_counts(path, f"files.{name}.summary", str(name), summary))
    totals = document.get("totals")
    # Older coverage.py versions write no totals: the files add up to the same.
    total = _json_counts(path, "totals", "", totals) if isinstance(totals, dict) else _sum("", files)
    return CoverageReport(total, tuple(files), "coverage.py json")


def _json_counts(path: Path, where: str, name: str, summary: Mapping[str, Any]) -> FileCoverage:
    lines = _count(path, f"{where}.num_statements", summary.get("num_statements"))
    covered = _count(path, f"{where}.covered_lines", summary.get("covered_lines"))
    branches = _count(path, f"{where}.num_branches", summary.get("num_branches", 0))
    taken = _count(path, f"{where}.covered_branches", summary.get("covered_branches", 0))
    if covered > lines or taken > branches:
        raise CoverageReportError(f"{path}: field '{where}' covers more than it counts")
    return FileCoverage(name, lines, covered, branches, taken)


def _from_cobertura(path: Path, data: bytes) -> CoverageReport:
    if _DTD.search(data):
        raise CoverageReportError(f"{path}: XML with a DTD or entities is refused (a coverage report needs neither)")
    try:
        root = ElementTree.fromstring(data)
    except ElementTree.ParseError as exc:
        raise CoverageReportError(f"{path}: invalid XML ({exc})") from exc
    if root.tag != "coverage":
        raise CoverageReportError(f"{path}: the root element is <{root.tag}>, not <coverage>: not a Cobertura report")
    per_file: dict[str, list[int]] = {}
    for element in root.iter("class"):
        name = element.get("filename")
        if not name:
            raise CoverageReportError(f"{path}: a <class> element has no 'filename' attribute")
        counts = per_file.setdefault(name, [0, 0, 0, 0])
        # Lines are listed under the class and again under each method: count the class's own list.
        for line in element.findall("./lines/line"):
            hits = _count(path, f"{name}: line {line.get('number')} hits", _integer(line.get("hits", "0")))
            counts[0] += 1
            counts[1] += hits > 0
            branches = _condition_coverage(path, name, line)
            if branches is not None:
                counts[2] += branches[1]
                counts[3] += branches[0]
    files = tuple(FileCoverage(name, *counts) for name, counts in per_file.items())
    if not files:
        # Some writers keep only the totals on <coverage>: lines-valid / lines-covered.
        total = FileCoverage(
            "",
            _count(path, "coverage@lines-valid", _integer(root.get("lines-valid"))),
            _count(path, "coverage@lines-covered", _integer(root.get("lines-covered"))),
            _count(path, "coverage@branches-valid", _integer(root.get("branches-valid", "0"))),
            _count(path, "coverage@branches-covered", _integer(root.get("branches-covered", "0"))),
        )
        return CoverageReport(total, (), "cobertura xml")
    return CoverageReport(_sum("", files), files, "cobertura xml")


_CONDITIONS = re.compile(r"\((\d+)/(\d+)\)")


def _condition_coverage(path: Path, name: str, line: ElementTree.Element) -> tuple[int, int] | None:
    """(taken, total) branches of a line from ``condition-coverage="50% (1/2)"``."""
    if line.get("branch") != "true":
        return None
    found = _CONDITIONS.search(line.get("condition-coverage", ""))
    if found is None:
        return None
    taken, total = int(found.group(1)), int(found.group(2))
    if taken > total:
        raise CoverageReportError(f"{path}: {name}: line {line.get('number')} condition-coverage {taken}/{total}")
    return taken, total


def _integer(text: str | None) -> Any:
    if text is None:
        return None
    try:
        return int(text)
    except ValueError:
        return text


def _count(path: Path, field: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0 or value > 10**12:
        raise CoverageReportError(f"{path}: field '{field}' must be a whole number >= 0, got {value!r}")
    return value


def _sum(name: str, files: Iterable[FileCoverage]) -> FileCoverage:
    files = list(files)
    return FileCoverage(
        name,
        sum(f.lines for f in files),
        sum(f.lines_covered for f in files),
        sum(f.branches for f in files),
        sum(f.branches_covered for f in files),
    )


class _CodeCoverage(DeterministicJudge):
    blocking = True  # reads a file that may be large: off the event loop inside juries

    def __init__(
        self,
        report: str,
        min_line: float | None,
        min_branch: float | None,
        files: Mapping[str, float],
        name: str,
    ) -> None:
        super().__init__(name)
        self.report = report
        self.min_line = min_line
        self.min_branch = min_branch
        self.files = dict(files)

    def check(self, context: Context) -> Judgment:
        workspace = workspace_of(context, "code_coverage")
        path = workspace / self.report
        if not path.resolve().is_relative_to(workspace):
            raise ValueError(f"code_coverage: {self.report!r} leads outside the workspace")
        if not path.is_file():
            return Judgment.failed(False, f"no coverage report at {self.report} in {workspace}")
        try:
            report = read_coverage(path)
        except CoverageReportError as exc:
            return Judgment.failed(False, str(exc), metadata={"report": self.report})
        checks = self._overall(report.totals)
        checks += [self._glob(pattern, minimum, report.files) for pattern, minimum in self.files.items()]
        metadata = {
            "report": self.report,
            "format": report.format,
            "line_percent": round(report.totals.line_percent, 2),
            "branch_percent": _rounded(report.totals.branch_percent),
            "files": len(report.files),
        }
        failed = [c for c in checks if not c.passed]
        summary = _describe(report.totals)
        if failed:
            reason = "; ".join(f"{c.name}: {c.message}" for c in failed)
            return Judgment.failed(False, f"coverage too low: {reason} ({summary})", checks=checks, metadata=metadata)
        return Judgment.passed(True, f"coverage ok: {summary}", checks=checks, metadata=metadata)

    def _overall(self, totals: FileCoverage) -> list[Check]:
        checks = []
        if self.min_line is not None:
            ok = totals.line_percent + 1e-9 >= self.min_line
            checks.append(Check("lines", ok, f"{totals.line_percent:.1f}% of lines, at least {self.min_line:g}%"))
        if self.min_branch is not None:
            branch = totals.branch_percent
            if branch is None:
                checks.append(Check("branches", False, "the report measured no branches (run with --branch)"))
            else:
                ok = branch + 1e-9 >= self.min_branch
                checks.append(Check("branches", ok, f"{branch:.1f}% of branches, at least {self.min_branch:g}%"))
        return checks

    @staticmethod
    def _glob(pattern: str, minimum: float, files: Iterable[FileCoverage]) -> Check:
        matched = [f for f in files if fnmatch.fnmatchcase(f.path, pattern)]
        if not matched:
            # A typo in a glob must not pass by matching nothing.
            return Check(pattern, False, "no file in the report matches")
        low = sorted((f for f in matched if f.line_percent + 1e-9 < minimum), key=lambda f: f.line_percent)
        if not low:
            return Check(pattern, True, f"{len(matched)} file(s), each at least {minimum:g}% of lines")
        worst = ", ".join(f"{f.path} {f.line_percent:.1f}%" for f in low[:5])
        more = f" and {len(low) - 5} more" if len(low) > 5 else ""
        return Check(pattern, False, f"{len(low)} of {len(matched)} file(s) under {minimum:g}%: {worst}{more}")


def _describe(totals: FileCoverage) -> str:
    text = f"lines {totals.line_percent:.1f}% ({totals.lines_covered}/{totals.lines})"
    if totals.branch_percent is not None:
        text += f", branches {totals.branch_percent:.1f}% ({totals.branches_covered}/{totals.branches})"
    return text


def _rounded(value: float | None) -> float | None:
    return None if value is None else round(value, 2)


def _percent(option: str, value: Any) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise ValueError(f"code_coverage({option}=...) must be a percentage from 0 to 100, got {value!r}")
    if not 0 <= value <= 100:
        raise ValueError(f"code_coverage({option}=...) must be a percentage from 0 to 100, got {value!r}")
    return float(value)


@judge_factory(tier=TIER_DETERMINISTIC)
def code_coverage(
    report: str = "coverage.json",
    *,
    min_line: float | None = None,
    min_branch: float | None = None,
    files: Mapping[str, float] | None = None,
    name: str | None = None,
) -> DeterministicJudge:
    """Pass when a coverage report in ``Context.workspace`` meets minimum line and branch coverage.

    Reads coverage.py JSON (``coverage json``) or Cobertura XML (``coverage xml``,
    gcovr, JaCoCo or Istanbul converters), chosen by the file's content. A missing
    or malformed report fails with the file and field named; a report with no
    branch data fails a ``min_branch``.

    Args:
        report: The report's path, relative to the workspace.
        min_line: Minimum percentage of lines covered overall (0-100).
        min_branch: Minimum percentage of branches covered overall (0-100).
        files: Per-file minimum line coverage by glob, e.g. ``{"src/core/*.py": 90}``:
            every file the glob matches must reach it; a glob that matches nothing fails.
        name: The judge's name in reports.

    Raises:
        ValueError: no minimum at all, a percentage outside 0-100, or a path outside the workspace.
    """
    check_relative(report)
    line, branch = _percent("min_line", min_line), _percent("min_branch", min_branch)
    globs: dict[str, float] = {}
    for pattern, minimum in (files or {}).items():
        if not isinstance(pattern, str) or not pattern:
            raise ValueError(f"code_coverage(files=...) keys must be globs, got {pattern!r}")
        value = _percent(f"files[{pattern!r}]", minimum)
        if value is None:
            raise ValueError(f"code_coverage(files=...) needs a percentage for {pattern!r}")
        globs[pattern] = value
    if line is None and branch is None and not globs:
        raise ValueError("code_coverage() needs min_line, min_branch or files")
    return _CodeCoverage(report, line, branch, globs, name or f"code_coverage({report})")
