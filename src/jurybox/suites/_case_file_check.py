"""A big cases file checked in a forked process while its run starts, instead of before.

Checking a cases file builds every line once (about 45 µs a line: a million lines
took 45 s before the first case could start). For a file over ``BACKGROUND_BYTES``,
``load_suite(..., check_cases_file="background")`` checks its first ``PREFIX_LINES``
lines at once (a typo near the top is still reported before anything runs), counts
its cases with a scan that parses no line, and leaves the whole check to a forked
child process, on another core. The run starts at once; the child's problems
(the same file:line:field ones, duplicates included) stop it as soon as they are
known, and its totals and samples replace the estimate from the first lines.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import pickle
import signal
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from jurybox.suites._errors import Problem, SuiteError

BACKGROUND_BYTES = 4 * 1024 * 1024
"""A cases file at least this big (about 40,000 short cases) is checked while its run starts."""
PREFIX_LINES = 1000
"""Lines of such a file checked before the run starts (about 50 ms)."""
_PR_SET_PDEATHSIG = 1


@dataclass(frozen=True)
class CheckOutcome:
    """What the check pass found: its totals, a line per distinct set of judges, and the problems."""

    totals: object  # PlanTotals (kept untyped here: _case_file imports this module)
    samples: tuple[object, ...]  # CaseLine
    problems: list[Problem]


class BackgroundCheck:
    """A check pass running in a forked child; ``wait()`` gives its outcome (once, to any thread).

    Args:
        check: The pass to run in the child; its ``SuiteError`` becomes the outcome's problems.
        path: The cases file (named in a problem when the child fails).
    """

    def __init__(self, check: Callable[[], CheckOutcome], path: Path) -> None:
        self._path = path
        self._lock = threading.Lock()
        self._outcome: CheckOutcome | None = None
        self._reap_lock = threading.Lock()
        self._reaping = False
        read, write = os.pipe()
        try:
            pid = os.fork()
        except OSError:
            os.close(read)
            os.close(write)
            raise
        if pid == 0:  # the child: check, send the outcome, and leave without running the parent's exit code
            os.close(read)
            _child(check, write, path)
        os.close(write)
        self._pid = pid
        self._read = read

    def wait(self) -> CheckOutcome:
        """The child's outcome, waiting for it (a blocking read: call it off the event loop)."""
        with self._lock:
            if self._outcome is None:
                self._outcome = self._collect()
            return self._outcome

    def terminate(self) -> None:
        """Stop the child without waiting (safe on the event loop): a ``wait()`` under way then returns at once."""
        # Under the lock _collect takes before reaping: once reaped, the pid may be another process's.
        with self._reap_lock:
            if not self._reaping:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(self._pid, signal.SIGTERM)

    def cancel(self) -> None:
        """Stop the child (a run interrupted before its check ended) and reap it; ``wait()`` then returns no problem."""
        self.terminate()
        self.wait()

    def _collect(self) -> CheckOutcome:
        chunks = []
        with os.fdopen(self._read, "rb") as pipe:
            while chunk := pipe.read(1 << 16):
                chunks.append(chunk)
        with self._reap_lock:  # the pipe closed: the child is exiting, and a zombie keeps its pid until reaped
            self._reaping = True
        _, status = os.waitpid(self._pid, 0)
        try:
            outcome = pickle.loads(b"".join(chunks))
        except Exception:  # the child was stopped or died: nothing to report but that
            if os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGTERM:
                return CheckOutcome(None, (), [])
            message = f"the cases file check stopped (exit status {status}); run again"
            return CheckOutcome(None, (), [Problem(str(self._path), None, "", message)])
        assert isinstance(outcome, CheckOutcome)
        return outcome


def _child(check: Callable[[], CheckOutcome], write: int, path: Path) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle; it stops this child
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    _die_with_parent()
    try:
        try:
            outcome = check()
        except SuiteError as exc:  # the file cannot be read, or changed: what the check pass would raise
            outcome = CheckOutcome(None, (), list(exc.problems))
        except BaseException as exc:  # reported as the file's problem, never a traceback from a child
            outcome = CheckOutcome(None, (), [Problem(str(path), None, "", f"cannot check: {exc!r}")])
        data = pickle.dumps(outcome)
        with os.fdopen(write, "wb") as pipe:
            pipe.write(data)
    finally:
        os._exit(0)


def _die_with_parent() -> None:
    """On Linux, a parent killed outright (no chance to stop the child) takes the check with it."""
    if not sys.platform.startswith("linux"):
        return
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)


def count_cases(path: Path, skipped: Callable[[bytes], bool]) -> tuple[int, int]:
    """(cases not marked ``skip``, non-blank lines) of a cases file, by a scan that parses only ``skip`` lines.

    Exact for a valid file, blank lines and ``skip`` keys counted as ``CaseFile.lines`` and the
    loader see them (a line that will not load counts as a case here: the check reports it).
    """
    cases = lines = 0
    with path.open("rb") as handle:
        for raw in handle:
            if _blank(raw):
                continue
            lines += 1
            # A key can be spelt with escapes ("sk\u0069p"): such a line is parsed to be sure.
            if (b"skip" in raw or b"\\u" in raw) and skipped(raw):
                continue
            cases += 1
    return cases, lines


def _blank(raw: bytes) -> bool:
    """Whether a line is blank as ``str.strip`` sees it, decoding only a line that is not plain ASCII at its ends."""
    stripped = raw.strip()
    if not stripped:
        return True
    if 0x20 < stripped[0] < 0x80 and 0x20 < stripped[-1] < 0x80:
        return False  # a printable ASCII character at either end is not whitespace to str.strip either
    return not raw.decode("utf-8", errors="replace").strip()
