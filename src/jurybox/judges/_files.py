"""Judges on the agent's workspace: a file exists, a file contains text."""

from __future__ import annotations

import re
from pathlib import Path

from jurybox.core import TIER_DETERMINISTIC, Check, Context, Judgment, judge_factory
from jurybox.judges._base import DeterministicJudge, short


def workspace_of(context: Context, judge: str) -> Path:
    if context.workspace is None:
        raise ValueError(f"{judge} needs Context.workspace (the folder the agent worked in)")
    if not context.workspace.is_dir():
        raise ValueError(f"{judge}: workspace {context.workspace} is not a folder")
    return context.workspace.resolve()


def check_relative(pattern: str) -> None:
    """Refuse paths that would let a judge look outside the workspace."""
    if not pattern:
        raise ValueError("a workspace path is needed")
    if Path(pattern).is_absolute() or ".." in Path(pattern).parts:
        raise ValueError(f"path {pattern!r} must be relative to the workspace and stay inside it")


def matching_files(workspace: Path, pattern: str) -> list[Path]:
    """Files under the workspace matching a relative path or glob."""
    check_relative(pattern)
    return sorted(p for p in workspace.glob(pattern) if p.is_file())


class _FileExists(DeterministicJudge):
    def __init__(self, path: str, name: str) -> None:
        super().__init__(name)
        self.path = path

    def check(self, context: Context) -> Judgment:
        workspace = workspace_of(context, "file_exists")
        found = matching_files(workspace, self.path)
        if found:
            names = ", ".join(str(p.relative_to(workspace)) for p in found[:5])
            return Judgment.passed(True, f"found {names}")
        return Judgment.failed(False, f"no file matches {self.path!r} in {workspace}")


@judge_factory(tier=TIER_DETERMINISTIC)
def file_exists(path: str, *, name: str | None = None) -> DeterministicJudge:
    """Pass when a file (relative path or glob such as ``reports/*.csv``) exists in ``Context.workspace``.

    Args:
        path: A path or glob relative to the workspace.
        name: The judge's name in reports.
    """
    check_relative(path)
    return _FileExists(path, name or f"file_exists({path})")


class _FileContains(DeterministicJudge):
    def __init__(self, path: str, text: str | None, pattern: re.Pattern[str] | None, name: str) -> None:
        super().__init__(name)
        self.path = path
        self.text = text
        self.pattern = pattern

    def check(self, context: Context) -> Judgment:
        workspace = workspace_of(context, "file_contains")
        files = matching_files(workspace, self.path)
        if not files:
            return Judgment.failed(False, f"no file matches {self.path!r} in {workspace}")
        checks = []
        for file in files:
            content = file.read_text(encoding="utf-8", errors="replace")
            hit = self.pattern.search(content) is not None if self.pattern else (self.text or "") in content
            checks.append(Check(str(file.relative_to(workspace)), hit, "found" if hit else "not found"))
        wanted = f"/{self.pattern.pattern}/" if self.pattern else short(self.text or "")
        hits = [c.name for c in checks if c.passed]
        if hits:
            return Judgment.passed(True, f"{wanted} found in {', '.join(hits)}", checks=checks)
        return Judgment.failed(False, f"{wanted} not found in {', '.join(c.name for c in checks)}", checks=checks)


@judge_factory(tier=TIER_DETERMINISTIC)
def file_contains(
    path: str, text: str | None = None, *, pattern: str | None = None, name: str | None = None
) -> DeterministicJudge:
    """Pass when a workspace file (path or glob; any match counts) contains ``text`` or matches ``pattern``.

    Args:
        path: A path or glob relative to the workspace.
        text: The text the file must contain (or give ``pattern``).
        pattern: A regular expression the file must match (or give ``text``).
        name: The judge's name in reports.
    """
    check_relative(path)
    if (text is None) == (pattern is None):
        raise ValueError("file_contains() needs exactly one of text= or pattern=")
    compiled = None
    if pattern is not None:
        try:
            compiled = re.compile(pattern)
        except re.error as exc:
            raise ValueError(f"invalid regular expression {pattern!r}: {exc}") from exc
    wanted = short(text) if text is not None else f"/{pattern}/"
    return _FileContains(path, text, compiled, name or f"file_contains({path}, {wanted})")
