"""A judge on a build tool's test run in the workspace: it exits 0 and its summary shows the tests passed.

An exit code alone can lie both ways: ``cargo test`` with no tests exits 0, and
a failing test under a misconfigured runner may too. So the judge reads the
tool's own summary (passed, failed, errors, skipped) and by default wants at
least one test passed and none failed; a tool that printed no summary passes on
its exit code only when ``min_passed`` is 0.
"""

from __future__ import annotations

import shlex
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

from jurybox.core import TIER_DETERMINISTIC, Check, Context, Judgment, judge_factory
from jurybox.judges._base import DeterministicJudge
from jurybox.judges._command import check_program, run_in_workspace, shown, tail
from jurybox.judges._test_summaries import TOOLS, TestSummary, read_summary


def default_command(tool: str, workspace: Path | None) -> list[str]:
    """The usual way to run ``tool``'s tests (Gradle through the project's wrapper when it has one)."""
    if tool == "pytest":
        return [sys.executable, "-m", "pytest", "-q"]
    if tool == "npm":
        return ["npm", "test"]
    if tool == "maven":
        return ["mvn", "-B", "test"]
    if tool == "gradle":
        wrapper = workspace / "gradlew" if workspace is not None else None
        return ["./gradlew", "test"] if wrapper is not None and wrapper.is_file() else ["gradle", "test"]
    return ["cargo", "test"]


class _Build(DeterministicJudge):
    blocking = True  # waits on a process: run in a worker thread inside juries

    def __init__(
        self,
        tool: str,
        argv: Sequence[str] | None,
        timeout: float,
        min_passed: int,
        max_failed: int,
        env: Mapping[str, str] | None,
        name: str,
    ) -> None:
        super().__init__(name)
        self.tool = tool
        self.argv = list(argv) if argv is not None else None
        self.timeout = timeout
        self.min_passed = min_passed
        self.max_failed = max_failed
        self.env = dict(env) if env else None

    def check(self, context: Context) -> Judgment:
        argv = self.argv or default_command(self.tool, context.workspace)
        command = shown(argv)
        try:
            ran = run_in_workspace(argv, context, timeout=self.timeout, env=self.env)
        except FileNotFoundError as exc:
            return Judgment.errored(f"{self.tool}: command not found: {exc.filename or command}", exception=exc)
        output = ran.stdout + "\n" + ran.stderr
        summary = read_summary(self.tool, output)
        metadata = {
            "tool": self.tool,
            "command": command,
            "exit_code": ran.exit_code,
            "summary": summary.to_dict() if summary is not None else None,
            "stdout": tail(ran.stdout),
            "stderr": tail(ran.stderr),
        }
        checks = self._checks(ran.exit_code, summary)
        counts = _describe(summary)
        failed = [c for c in checks if not c.passed]
        if not failed:
            return Judgment.passed(True, f"`{command}`: {counts}", checks=checks, metadata=metadata)
        last_lines = "\n".join(tail(output).strip().splitlines()[-5:])
        reason = "; ".join(c.message for c in failed)
        return Judgment.failed(
            False, f"`{command}`: {reason} ({counts}); last output:\n{last_lines}", checks=checks, metadata=metadata
        )

    def _checks(self, exit_code: int | None, summary: TestSummary | None) -> list[Check]:
        if exit_code is None:
            return [Check("finished", False, f"did not finish within {self.timeout:g}s (killed)")]
        checks = [Check("exit code", exit_code == 0, f"exited {exit_code}" if exit_code else "exited 0")]
        if summary is None:
            if self.min_passed > 0:
                checks.append(Check("summary", False, f"no {self.tool} test summary in the output"))
            return checks
        broken = summary.failed + summary.errors
        checks.append(
            Check("failed", broken <= self.max_failed, f"{broken} failed or errored, at most {self.max_failed}")
        )
        checks.append(
            Check("passed", summary.passed >= self.min_passed, f"{summary.passed} passed, at least {self.min_passed}")
        )
        return checks


def _describe(summary: TestSummary | None) -> str:
    if summary is None:
        return "no test summary"
    parts = [f"{summary.passed} passed", f"{summary.failed} failed"]
    if summary.errors:
        parts.append(f"{summary.errors} errors")
    if summary.skipped:
        parts.append(f"{summary.skipped} skipped")
    return ", ".join(parts)


def _whole(option: str, value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(f"build({option}=...) must be a whole number >= 0, got {value!r}")
    return value


@judge_factory(tier=TIER_DETERMINISTIC)
def build(
    tool: str,
    *,
    cmd: str | Sequence[str] | None = None,
    timeout: float = 600.0,
    min_passed: int = 1,
    max_failed: int = 0,
    env: Mapping[str, str] | None = None,
    name: str | None = None,
) -> DeterministicJudge:
    """Pass when a build tool's tests, run in ``Context.workspace``, exit 0 and its summary shows them passing.

    Reads the tool's own summary (pytest, cargo, Maven Surefire, Gradle, and npm
    test runners: node --test, Jest, Vitest, Mocha) into passed, failed, errors and
    skipped, kept in the judgment with the exit code and the output's end.

    Args:
        tool: ``pytest``, ``npm``, ``maven``, ``gradle`` or ``cargo``.
        cmd: The command instead of the tool's usual one (``python -m pytest -q``,
            ``npm test``, ``mvn -B test``, ``./gradlew test`` or ``gradle test``, ``cargo test``).
        timeout: Seconds before the run is killed (and fails).
        min_passed: Tests that must pass; 0 accepts a run whose output has no summary
            (Gradle prints none when every test passes) on its exit code.
        max_failed: Failed and errored tests tolerated.
        env: Extra environment variables.
        name: The judge's name in reports.

    Raises:
        ValueError: an unknown tool, a bad number, or a program that is not on PATH.
    """
    if tool not in TOOLS:
        raise ValueError(f"build(tool=...) must be one of {', '.join(TOOLS)}, got {tool!r}")
    if isinstance(timeout, bool) or not isinstance(timeout, int | float) or timeout <= 0:
        raise ValueError(f"build(timeout=...) must be a positive number of seconds, got {timeout!r}")
    argv: list[str] | None = None
    if cmd is not None:
        argv = shlex.split(cmd) if isinstance(cmd, str) else list(cmd)
        if not argv:
            raise ValueError("build(cmd=...) is empty")
        check_program(argv, shell=False)
    minimum, maximum = _whole("min_passed", min_passed), _whole("max_failed", max_failed)
    label = shown(argv) if argv is not None else tool
    return _Build(tool, argv, float(timeout), minimum, maximum, env, name or f"build({label})")
