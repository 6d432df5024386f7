"""Runs started from the browser: the stored suite runs in a thread of the server, through the run service.

The run is prepared as ``jurybox run --suite`` prepares it (``jurybox.runs``:
the suite exported from the store and loaded with relative paths from the
server's current directory, the same options, git facts and store), so a run
started here and one started from the command line cannot differ. The runner
writes every case as it ends, so the run page shows its progress and a kill of
the server leaves a run that ``jurybox run --resume`` (or the browser)
finishes. This module keeps only the thread, the wait for the run to open, and
cancel, which is Ctrl-C: ``PreparedRun.stop()`` on the run's own event loop.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from jurybox.runs import NoCasesError, PreparedRun, RunRequest, RunRequestError, prepare
from jurybox.store import StoreError
from jurybox.suites import JudgeModelError, SuiteError

logger = logging.getLogger("jurybox.web")

START_WAIT_SECONDS = 30.0
"""How long the start request waits for the run to be opened in the store (the agent is built first)."""


class LaunchError(Exception):
    """The run could not start; the message says why, in words."""


@dataclass
class Launch:
    """One run this server started: its thread, its loop (to stop it from a request) and its end."""

    suite: str
    started_by: str
    run_id: str | None = None
    error: str | None = None
    finished: bool = False
    opened: threading.Event = field(default_factory=threading.Event)
    prepared: PreparedRun | None = None
    loop: asyncio.AbstractEventLoop | None = None
    thread: threading.Thread | None = None

    def stop(self) -> bool:
        """Ask the run to stop as Ctrl-C does; False when it is not running here any more."""
        if self.finished or self.prepared is None or self.loop is None:
            return False
        self.loop.call_soon_threadsafe(self.prepared.stop)
        return True

    def open_as(self, run_id: str) -> None:
        """The run is open in the store (begun, or resumed): the start request may answer."""
        self.run_id = run_id
        self.opened.set()


class Launches:
    """The runs started by this server, by run id."""

    def __init__(self, store_url: str | None) -> None:
        self.store_url = store_url
        self._by_run: dict[str, Launch] = {}
        self._lock = threading.Lock()

    def get(self, run_id: str) -> Launch | None:
        with self._lock:
            return self._by_run.get(run_id)

    def stop_all(self, wait_seconds: float = 10.0) -> None:
        """Stop every run still going (the server is shutting down): each is left resumable."""
        with self._lock:
            going = [launch for launch in self._by_run.values() if launch.stop()]
        deadline = time.monotonic() + wait_seconds
        for launch in going:
            if launch.thread is not None:
                launch.thread.join(max(0.0, deadline - time.monotonic()))

    def start(
        self,
        suite: str,
        *,
        started_by: str,
        selectors: Sequence[str] = (),
        concurrency: int | None = None,
        judge_model: str | None = None,
        resume: str | None = None,
    ) -> Launch:
        """Start a run of the stored suite; return once it is open in the store (or failed to open).

        Raises:
            LaunchError: the suite cannot be exported or loaded, no case matches, or the agent cannot start.
        """
        launch = Launch(suite, started_by)
        try:
            request = RunRequest(
                stored_suites=(suite,),
                store=self.store_url,
                selectors=tuple(selectors),
                concurrency=concurrency,
                judge_model=judge_model,
                resume=resume,
            )
        except RunRequestError as exc:
            raise LaunchError(str(exc)) from None
        launch.prepared = _prepared(request)
        thread = threading.Thread(target=self._run, args=(launch,), name=f"jurybox-run-{suite}", daemon=True)
        launch.thread = thread
        thread.start()
        if not launch.opened.wait(START_WAIT_SECONDS) or launch.run_id is None:
            raise LaunchError(launch.error or "the run did not start in time; see the server log")
        with self._lock:
            self._by_run[launch.run_id] = launch
        return launch

    def _run(self, launch: Launch) -> None:
        prepared = launch.prepared
        assert prepared is not None

        async def main() -> None:
            launch.loop = asyncio.get_running_loop()
            await prepared.start(on_open=launch.open_as)

        try:
            asyncio.run(main())
        except Exception as exc:  # the agent or the store failed: the run page and the log say so
            logger.exception("run of suite %s started from the dashboard failed", launch.suite)
            launch.error = f"{type(exc).__name__}: {exc}"
        finally:
            launch.finished = True
            launch.opened.set()
            prepared.close()


def _prepared(request: RunRequest) -> PreparedRun:
    """The stored suite loaded and its run's store open, or why not.

    Raises:
        LaunchError: the suite cannot be exported or loaded, no case matches, or the run to resume cannot be.
    """
    try:
        prepared = prepare(request)
    except NoCasesError as exc:
        wanted = " ".join(exc.selectors) or "the run"
        raise LaunchError(f"no case of suite {request.stored_suites[0]!r} matches {wanted}") from None
    except (RunRequestError, StoreError, SuiteError, JudgeModelError) as exc:
        raise LaunchError(str(exc)) from None
    try:
        prepared.open()
    except (RunRequestError, StoreError) as exc:
        prepared.close()
        raise LaunchError(str(exc)) from None
    except BaseException:
        prepared.close()
        raise
    return prepared


def launch_view(launch: Launch | None) -> Mapping[str, Any]:
    if launch is None:
        return {"here": False, "running": False, "error": None, "started_by": None}
    return {"here": True, "running": not launch.finished, "error": launch.error, "started_by": launch.started_by}
