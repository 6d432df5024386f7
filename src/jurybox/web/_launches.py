"""Runs started from the browser: the stored suite runs in a thread of the server, through the CLI's runner.

The suite is exported from the store to a file in a temporary folder and loaded
as ``jurybox run --suite`` loads it (relative paths from the server's current
directory); a ``SuiteRunner`` with a store of its own writes every case as it
ends, so the run page shows its progress and a kill of the server leaves a run
that ``jurybox run --resume`` (or the browser) finishes. Cancel is Ctrl-C:
``SuiteRunner.stop()`` on the run's own event loop.
"""

from __future__ import annotations

import asyncio
import logging
import tempfile
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

from jurybox.engine import RunOptions, RunStore, SuiteRunner
from jurybox.store import ResultRepository, RunRepository, Store, StoreError, export_suite_file, open_store
from jurybox.suites import JudgeModelError, SuiteError, load_suite

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
    runner: SuiteRunner | None = None
    loop: asyncio.AbstractEventLoop | None = None
    thread: threading.Thread | None = None

    def stop(self) -> bool:
        """Ask the run to stop as Ctrl-C does; False when it is not running here any more."""
        if self.finished or self.runner is None or self.loop is None:
            return False
        self.loop.call_soon_threadsafe(self.runner.stop)
        return True


class _Recording:
    """The run's store, telling the launch the run's id as soon as the runner opens it."""

    def __init__(self, store: Store, launch: Launch) -> None:
        self._store = store
        self.runs = _OpenedRuns(store.runs, launch)
        self.results = _ResumedResults(store.results, launch)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._store, name)


class _OpenedRuns:
    """The store's runs; a new run's id goes to the launch the moment it is opened."""

    def __init__(self, runs: RunRepository, launch: Launch) -> None:
        self._runs = runs
        self._launch = launch

    def begin(self, *args: Any, **kwargs: Any) -> str:
        run_id = self._runs.begin(*args, **kwargs)
        self._launch.run_id = run_id
        self._launch.opened.set()
        return run_id

    def __getattr__(self, name: str) -> Any:
        return getattr(self._runs, name)


class _ResumedResults:
    """The store's results; a resumed run is not begun again: the runner reads what it recorded instead."""

    def __init__(self, results: ResultRepository, launch: Launch) -> None:
        self._results = results
        self._launch = launch

    def recorded(self, run_id: str) -> set[str]:
        done = self._results.recorded(run_id)
        self._launch.run_id = run_id
        self._launch.opened.set()
        return done

    def __getattr__(self, name: str) -> Any:
        return getattr(self._results, name)


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
        folder = tempfile.TemporaryDirectory(prefix="jurybox-web-run-")
        try:
            store = self._prepare(launch, Path(folder.name), selectors, concurrency, judge_model)
        except BaseException:
            folder.cleanup()
            raise
        thread = threading.Thread(
            target=self._run, args=(launch, store, folder, resume), name=f"jurybox-run-{suite}", daemon=True
        )
        launch.thread = thread
        thread.start()
        if not launch.opened.wait(START_WAIT_SECONDS) or launch.run_id is None:
            raise LaunchError(launch.error or "the run did not start in time; see the server log")
        with self._lock:
            self._by_run[launch.run_id] = launch
        return launch

    def _prepare(
        self, launch: Launch, folder: Path, selectors: Sequence[str], concurrency: int | None, judge_model: str | None
    ) -> Store:
        """Load the stored suite and make the launch's runner; the run's own store, open."""
        suite = launch.suite
        store = open_store(self.store_url, busy_timeout=30.0)
        try:
            path = folder / "suite.yaml"
            export_suite_file(store, suite, path)
            loaded = load_suite(path, base_dir=Path.cwd(), judge_model=judge_model, concurrency=concurrency)
            if not loaded.select(selectors):
                raise LaunchError(f"no case of suite {suite!r} matches {' '.join(selectors) or 'the run'}")
            options = RunOptions(
                concurrency=concurrency or loaded.concurrency or RunOptions().concurrency, selectors=tuple(selectors)
            )
            launch.runner = SuiteRunner(loaded, options, store=cast(RunStore, _Recording(store, launch)))
            return store
        except (StoreError, SuiteError, JudgeModelError) as exc:
            store.close()
            raise LaunchError(str(exc)) from None
        except BaseException:
            store.close()
            raise

    def _run(self, launch: Launch, store: Store, folder: tempfile.TemporaryDirectory[str], resume: str | None) -> None:
        runner = launch.runner
        assert runner is not None

        async def main() -> None:
            launch.loop = asyncio.get_running_loop()
            await runner.run(resume=resume)

        try:
            asyncio.run(main())
        except Exception as exc:  # the agent or the store failed: the run page and the log say so
            logger.exception("run of suite %s started from the dashboard failed", launch.suite)
            launch.error = f"{type(exc).__name__}: {exc}"
        finally:
            launch.finished = True
            launch.opened.set()
            store.close()
            folder.cleanup()


def launch_view(launch: Launch | None) -> Mapping[str, Any]:
    if launch is None:
        return {"here": False, "running": False, "error": None, "started_by": None}
    return {"here": True, "running": not launch.finished, "error": launch.error, "started_by": launch.started_by}
