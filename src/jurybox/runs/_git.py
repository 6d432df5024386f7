"""The git state a run records: the commit, the branch and whether tracked files had changes.

Read from the suite's folder with one ``git status`` call (porcelain v2 says the
commit, the branch and each changed file). No git, a folder outside any
repository, a repository without a commit or a git that does not answer in time
leave the run without git facts; they never stop it.
"""

from __future__ import annotations

import re
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

GIT_SECONDS = 5.0
"""How long git may take to answer (a slow network file system, a huge repository)."""
_STATUS = ["git", "--no-optional-locks", "status", "--porcelain=v2", "--branch", "--untracked-files=no"]
_COMMIT = re.compile(r"[0-9a-f]{40}(?:[0-9a-f]{24})?")  # SHA-1, or SHA-256 in a repository that uses it
_MOST_BRANCH = 255


@dataclass(frozen=True)
class GitInfo:
    """Where the suite's code stood when the run started.

    Attributes:
        commit: The commit checked out (full hash).
        branch: The branch checked out; None on a detached HEAD.
        dirty: Whether tracked files differ from the commit (files git does not track are not
            counted); None when git could not tell in time.
    """

    commit: str
    branch: str | None = None
    dirty: bool | None = None

    def run_config(self) -> dict[str, Any]:
        """The facts a run's config records next to its commit (what is unknown is left out)."""
        facts: dict[str, Any] = {}
        if self.branch is not None:
            facts["git_branch"] = self.branch
        if self.dirty is not None:
            facts["git_dirty"] = self.dirty
        return facts


def git_info(folder: Path) -> GitInfo | None:
    """The git state of ``folder``'s repository; None when there is none to read."""
    try:
        done = _git(_STATUS, folder)
    except subprocess.TimeoutExpired:
        # The status compares every tracked file; the commit alone is one file read.
        return _commit_only(folder)
    except (OSError, subprocess.SubprocessError):
        return None
    return parse_status(done.stdout) if done.returncode == 0 else None


def parse_status(text: str) -> GitInfo | None:
    """The git state ``git status --porcelain=v2 --branch`` printed; None without a commit."""
    commit: str | None = None
    branch: str | None = None
    dirty = False
    for line in text.splitlines():
        if line.startswith("# branch.oid "):
            value = line.removeprefix("# branch.oid ").strip()
            commit = value if _COMMIT.fullmatch(value) else None
        elif line.startswith("# branch.head "):
            value = line.removeprefix("# branch.head ").strip()
            branch = value if value and value != "(detached)" and len(value) <= _MOST_BRANCH else None
        elif line.strip() and not line.startswith("#"):
            dirty = True  # a changed, renamed or unmerged tracked file
    return GitInfo(commit, branch, dirty) if commit is not None else None


def _commit_only(folder: Path) -> GitInfo | None:
    try:
        done = _git(["git", "rev-parse", "HEAD"], folder)
    except (OSError, subprocess.SubprocessError):
        return None
    commit = done.stdout.strip()
    return GitInfo(commit) if done.returncode == 0 and _COMMIT.fullmatch(commit) else None


def _git(command: list[str], folder: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        command,
        cwd=folder,
        capture_output=True,
        encoding="utf-8",
        errors="replace",  # a branch name in another encoding is not a reason to fail
        timeout=GIT_SECONDS,
        check=False,
    )
