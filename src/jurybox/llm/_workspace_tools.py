"""What an agentic judge may do before its verdict: list and read files of the workspace, run allowed commands.

Everything is confined to the workspace: a path is resolved (symbolic links
included) and refused when it leads outside; a command runs only when it is,
word for word, one the judge's author allowed, without a shell, in the
workspace, killed at its timeout. Reads and listings are capped, so a huge or
hostile workspace cannot flood the judge's prompt. Every refusal is a tool
result the model reads (and the transcript keeps), never an exception.
"""

from __future__ import annotations

import os
import shlex
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

TOOLS = ("list_files", "read_file", "run")
"""The tools an agentic judge may be given."""
MAX_READ_CHARS = 12_000
MAX_LIST_ENTRIES = 200
MAX_COMMAND_OUTPUT = 6_000
COMMAND_TIMEOUT = 60.0
_SKIPPED_DIRS = frozenset({".git", "node_modules", "__pycache__", ".venv", ".mypy_cache", ".ruff_cache"})


class ToolRefused(ValueError):  # noqa: N818 - a refusal the model reads, not a failure of the judge
    """A tool call the workspace rules refuse; its message is what the model is told."""


@dataclass(frozen=True)
class WorkspaceTools:
    """The tools over one workspace.

    Attributes:
        root: The workspace (``Context.workspace``), resolved.
        allowed: Which of ``TOOLS`` the judge may use.
        commands: The commands ``run`` accepts, exactly as written.
        command_timeout: Seconds before a command is killed.
        env: Extra environment variables for commands.
    """

    root: Path
    allowed: tuple[str, ...] = ("list_files", "read_file")
    commands: tuple[str, ...] = ()
    command_timeout: float = COMMAND_TIMEOUT
    env: Mapping[str, str] | None = None

    def call(self, action: str, arguments: Mapping[str, Any]) -> str:
        """Run one tool call and return what the model is shown.

        Raises:
            ToolRefused: an unknown or disallowed tool, a path outside the workspace, a command not allowed.
        """
        if action not in self.allowed:
            raise ToolRefused(f"the tool {action!r} is not available; use one of {', '.join(self.allowed)}")
        if action == "list_files":
            return self.list_files(str(arguments.get("path") or "."))
        if action == "read_file":
            return self.read_file(str(arguments.get("path") or ""))
        return self.run(str(arguments.get("command") or ""))

    def path(self, relative: str) -> Path:
        """``relative`` inside the workspace, or a refusal."""
        if not relative or "\x00" in relative or len(relative) > 1024:
            raise ToolRefused("give a path relative to the workspace")
        candidate = Path(relative)
        if candidate.is_absolute():
            raise ToolRefused(f"{relative!r} is absolute; paths are relative to the workspace")
        resolved = (self.root / candidate).resolve()
        if not resolved.is_relative_to(self.root):
            raise ToolRefused(f"{relative!r} is outside the workspace")
        return resolved

    def list_files(self, relative: str) -> str:
        folder = self.path(relative)
        if not folder.is_dir():
            raise ToolRefused(f"{relative!r} is not a folder of the workspace")
        entries: list[str] = []
        for current, dirs, files in os.walk(folder):
            dirs[:] = sorted(d for d in dirs if d not in _SKIPPED_DIRS)
            base = Path(current)
            for name in sorted(files):
                entries.append(str((base / name).relative_to(self.root)))
                if len(entries) >= MAX_LIST_ENTRIES:
                    return "\n".join(entries) + f"\n(listing stopped at {MAX_LIST_ENTRIES} files)"
        return "\n".join(entries) if entries else "(no files)"

    def read_file(self, relative: str) -> str:
        file = self.path(relative)
        if not file.is_file():
            raise ToolRefused(f"{relative!r} is not a file of the workspace")
        with file.open("rb") as handle:
            data = handle.read(MAX_READ_CHARS * 4 + 1)
        text = data.decode("utf-8", errors="replace")
        if len(text) > MAX_READ_CHARS or len(data) > MAX_READ_CHARS * 4:
            size = file.stat().st_size
            return text[:MAX_READ_CHARS] + f"\n(cut at {MAX_READ_CHARS:,} characters of {size:,} bytes)"
        return text

    def run(self, command: str) -> str:
        if command not in self.commands:
            allowed = "; ".join(self.commands) if self.commands else "none"
            raise ToolRefused(f"the command {command!r} is not allowed; allowed commands: {allowed}")
        try:
            done = subprocess.run(
                shlex.split(command),
                cwd=self.root,
                env={**os.environ, **self.env} if self.env else None,
                capture_output=True,
                text=True,
                errors="replace",
                timeout=self.command_timeout,
                check=False,
            )
        except subprocess.TimeoutExpired:
            return f"(killed after {self.command_timeout:g}s)"
        except FileNotFoundError as exc:
            return f"(command not found: {exc.filename})"
        output = done.stdout + done.stderr
        if len(output) > MAX_COMMAND_OUTPUT:
            output = "…" + output[-MAX_COMMAND_OUTPUT:]
        return f"exit code {done.returncode}\n{output}"


def workspace_tools(
    root: Path | None, allowed: Sequence[str], commands: Sequence[str], *, timeout: float, env: Mapping[str, str] | None
) -> WorkspaceTools | None:
    """The tools over ``root``, or None when the case has no workspace (only the answer can be judged then)."""
    if root is None or not root.is_dir():
        return None
    return WorkspaceTools(root.resolve(), tuple(allowed), tuple(commands), timeout, env)
