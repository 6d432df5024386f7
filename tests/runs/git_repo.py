"""A throwaway git repository for the run service's tests (no user config, hooks or signing needed)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

_ENV = {key: value for key, value in os.environ.items() if not key.startswith("GIT_")}
_ENV.update(GIT_CONFIG_GLOBAL=os.devnull, GIT_CONFIG_NOSYSTEM="1")


def git(folder: Path, *args: str) -> str:
    """Run git in ``folder`` as a stranger to this machine's settings; its output."""
    done = subprocess.run(
        ["git", "-c", "user.name=jurybox", "-c", "user.email=jurybox@example.invalid", *args],
        cwd=folder,
        env=_ENV,
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout.strip()


def commit_all(folder: Path, branch: str = "trunk") -> str:
    """Make ``folder`` a repository on ``branch`` with everything in it committed; the commit's hash."""
    if not (folder / ".git").exists():
        git(folder, "init", "-q", "-b", branch)
    git(folder, "add", "-A")
    git(folder, "commit", "-q", "--allow-empty", "-m", "suite")
    return git(folder, "rev-parse", "HEAD")
