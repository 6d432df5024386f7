"""A judge that runs a command in the workspace: the build is green, the tests pass."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from jurybox.core import TIER_DETERMINISTIC, Check, Context, Judgment, judge_factory
from jurybox.judges._base import DeterministicJudge

OUTPUT_TAIL = 4000


def tail(text: str, limit: int = OUTPUT_TAIL) -> str:
    """The end of a command's output, where the error usually is."""
    return text if len(text) <= limit else "…" + text[-limit:]


@dataclass(frozen=True)
class CommandRun:
    """What a command did: its exit code (None when it was killed at the timeout) and its output."""

    exit_code: int | None
    stdout: str
    stderr: str

    @property
    def timed_out(self) -> bool:
        return self.exit_code is None


def run_in_workspace(
    argv: Sequence[str] | str,
    context: Context,
    *,
    timeout: float,
    shell: bool = False,
    env: Mapping[str, str] | None = None,
) -> CommandRun:
    """Run ``argv`` in ``Context.workspace`` (the current folder when it has none), killed at ``timeout``.

    Raises:
        ValueError: the workspace is not a folder.
        FileNotFoundError: the program does not exist.
    """
    cwd = context.workspace
    if cwd is not None and not cwd.is_dir():
        raise ValueError(f"workspace {cwd} is not a folder")
    try:
        done = subprocess.run(
            argv,
            shell=shell,
            cwd=cwd,
            env={**os.environ, **env} if env else None,
            capture_output=True,
            text=True,
            errors="replace",
            timeout=timeout,
            check=False,
        )
    except subprocess.TimeoutExpired as exc:
        return CommandRun(None, _text(exc.stdout), _text(exc.stderr))
    return CommandRun(done.returncode, done.stdout, done.stderr)


def shown(argv: Sequence[str] | str) -> str:
    """A command as a person would type it."""
    return argv if isinstance(argv, str) else shlex.join(argv)


class _Command(DeterministicJudge):
    blocking = True  # it waits on a process: run in a worker thread inside juries

    def __init__(
        self,
        argv: Sequence[str] | str,
        timeout: float,
        expect_exit: int,
        shell: bool,
        env: Mapping[str, str] | None,
        name: str,
    ) -> None:
        super().__init__(name)
        self.argv = argv
        self.timeout = timeout
        self.expect_exit = expect_exit
        self.shell = shell
        self.env = dict(env) if env else None

    def check(self, context: Context) -> Judgment:
        command = shown(self.argv)
        try:
            ran = run_in_workspace(self.argv, context, timeout=self.timeout, shell=self.shell, env=self.env)
        except FileNotFoundError as exc:
            return Judgment.errored(f"command not found: {exc.filename or command}", exception=exc)
        if ran.exit_code is None:
            return Judgment.failed(
                False,
                f"`{command}` did not finish within {self.timeout:g}s (killed)",
                checks=[Check("finished", False, f"timed out after {self.timeout:g}s")],
                metadata={"output": tail(ran.stdout + ran.stderr), "timed_out": True},
            )
        output = tail(ran.stdout + ran.stderr)
        ok = ran.exit_code == self.expect_exit
        checks = [Check("exit code", ok, f"exit {ran.exit_code}, expected {self.expect_exit}")]
        metadata = {"exit_code": ran.exit_code, "stdout": tail(ran.stdout), "stderr": tail(ran.stderr)}
        reason = f"`{command}` exited {ran.exit_code} (expected {self.expect_exit})"
        if ok:
            return Judgment.passed(True, reason, checks=checks, metadata=metadata)
        last_lines = "\n".join(output.strip().splitlines()[-5:])
        return Judgment.failed(False, f"{reason}; last output:\n{last_lines}", checks=checks, metadata=metadata)


def _text(value: str | bytes | None) -> str:
    if value is None:
        return ""
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else value


def check_program(argv: Sequence[str] | str, shell: bool) -> None:
    """Refuse, when the judge is built, a program that is not on PATH (a typo fails at load, not per case)."""
    if not shell and not isinstance(argv, str) and argv:
        program = argv[0]
        if os.sep not in program and shutil.which(program) is None:
            raise ValueError(f"command not found: {program!r} is not on PATH")


@judge_factory(tier=TIER_DETERMINISTIC)
def command(
    cmd: str | Sequence[str],
    *,
    timeout: float = 60.0,
    expect_exit: int = 0,
    shell: bool = False,
    env: Mapping[str, str] | None = None,
    name: str | None = None,
) -> DeterministicJudge:
    """Pass when a command run in ``Context.workspace`` exits with ``expect_exit``.

    The exit code and the captured output (its last 4,000 characters) are kept
    in the judgment. A command that hangs is killed at ``timeout`` and fails;
    a command that does not exist is an ERROR (the judge is misconfigured).

    Args:
        cmd: An argument list, or a string split like a shell would (no shell
            features unless ``shell=True``).
        timeout: Seconds before the command is killed.
        expect_exit: The exit code that means success.
        shell: Run through ``/bin/sh -c`` (pipes, globs).
        env: Extra environment variables.
        name: The judge's name in reports.

    Raises:
        ValueError: an empty command, a non-positive timeout, or (without
            ``shell``) a program that is not on PATH.
    """
    if isinstance(timeout, bool) or not isinstance(timeout, int | float) or timeout <= 0:
        raise ValueError(f"command(timeout=...) must be a positive number of seconds, got {timeout!r}")
    argv: str | list[str]
    if shell:
        argv = cmd if isinstance(cmd, str) else shlex.join(cmd)
    else:
        argv = shlex.split(cmd) if isinstance(cmd, str) else list(cmd)
    if not argv:
        raise ValueError("command() needs a command")
    check_program(argv, shell)
    return _Command(argv, float(timeout), expect_exit, shell, env, name or f"command({shown(argv)})")
