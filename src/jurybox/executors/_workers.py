"""Worker processes for ``jurybox run --workers N``: the process plumbing, not the running of cases.

One interpreter runs one case's Python at a time. Past a few hundred cases in
flight, its CPU (agent call, prompt, HTTP client, verdict, store write) rather
than the judge model's latency sets the pace, and a second core sits idle.
With workers, the runner opens the run and then forks N processes from the
loaded suite (nothing is imported or parsed again); each runs every N-th case
with its share of the concurrency, exactly as a one-process run does, and
writes its records to the store itself. Each sends the parent one small
message per finished case (for the progress bar) and one when it ends.

Fork, not spawn: a spawned worker would import jurybox and load the suite
again, about a second per worker, which is most of what a big run saves.
"""

from __future__ import annotations

import asyncio
import multiprocessing
import os
import pickle
import signal
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from multiprocessing.connection import Connection
from multiprocessing.process import BaseProcess
from types import FrameType

from jurybox.core import CaseRecord, Status
from jurybox.models import Spend


def fork_available() -> bool:
    """True where worker processes can be forked (Linux, macOS; not Windows)."""
    return "fork" in multiprocessing.get_all_start_methods()


@dataclass(frozen=True)
class CaseFinished:
    """A worker's message for one finished case: enough for the progress bar and the run's counts."""

    case: str
    status: Status
    llm_skipped: bool
    spend: Spend


@dataclass(frozen=True)
class WorkerEnded:
    """A worker's last message: how its share of the run ended (``error``: why it failed, if it did)."""

    status: str
    spend: Spend
    store_errors: list[str] = field(default_factory=list)
    error: str | None = None


Message = CaseFinished | WorkerEnded


class PipeProgress:
    """A worker's ProgressSink: each finished case goes to the parent as a ``CaseFinished``."""

    def __init__(self, connection: Connection, llm_skipped: Callable[[CaseRecord], bool]) -> None:
        self._connection = connection
        self._llm_skipped = llm_skipped

    def start(self, suite: str, total: int, done: int) -> None:
        """The parent draws the bar; a worker has nothing to start."""

    def case_done(self, record: CaseRecord, spend: Spend) -> None:
        # The worker's running total, copied: the parent adds up the latest total of each worker.
        send(self._connection, CaseFinished(record.case, record.status, self._llm_skipped(record), replace(spend)))

    def stop(self) -> None:
        """Nothing to stop: the worker's last message is ``WorkerEnded``."""


def send(connection: Connection, message: Message) -> None:
    connection.send_bytes(pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL))


def receive(connection: Connection) -> Message:
    message = pickle.loads(connection.recv_bytes())
    if not isinstance(message, CaseFinished | WorkerEnded):
        raise TypeError(f"unexpected message from a worker: {message!r}")
    return message


@dataclass(eq=False)
class Worker:
    """A running worker process and the read end of its pipe."""

    index: int
    process: BaseProcess
    connection: Connection
    ended: WorkerEnded | None = None
    killed: bool = False

    def problem(self) -> str | None:
        """Why this worker did not finish its cases, for the run's notes; None when it did."""
        if self.ended is not None and self.ended.error is None:
            return None
        if self.ended is not None:
            how = f"failed: {self.ended.error}"
        elif self.killed:
            how = "did not exit in time and was killed"
        elif self.process.exitcode is not None and self.process.exitcode < 0:
            how = f"was killed by signal {-self.process.exitcode}"
        else:
            how = f"exited with code {self.process.exitcode}"
        return f"worker {self.index} {how}; its unfinished cases have no result (resume the run to judge them)"


def start_worker(index: int, main: Callable[[Connection], None]) -> Worker:
    """Fork a worker that runs ``main(connection)``; it sends its messages on ``connection``."""
    context = multiprocessing.get_context("fork")
    reader, writer = context.Pipe(duplex=False)
    process = context.Process(
        target=_worker_entry, args=(main, writer, reader), name=f"jurybox-worker-{index}", daemon=True
    )
    process.start()
    # The parent keeps only the read end: the pipe reports EOF when the worker's end closes with it.
    writer.close()
    return Worker(index, process, reader)


def _worker_entry(main: Callable[[Connection], None], writer: Connection, reader: Connection) -> None:
    reader.close()
    _forget_parent_signals()
    main(writer)


_early_stops: list[int] = []
"""Stop signals a worker received before its runner existed (see ``stopped_early``)."""


def _forget_parent_signals() -> None:
    """Undo what the parent's event loop set up for signals, which a forked child inherits.

    The parent's loop points the C-level signal wake-up at its own socket: left in
    place, a Ctrl-C reaching the worker would also be delivered to the parent's loop
    as if it had received a second one. Until the worker's runner takes them over, a
    Ctrl-C or the parent's stop is only noted: SIGTERM's default would kill the worker.
    """
    signal.set_wakeup_fd(-1)
    _early_stops.clear()
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, lambda number, _frame: _early_stops.append(number))


def stopped_early() -> bool:
    """True when a stop reached this worker before its runner's handlers were installed."""
    return bool(_early_stops)


def interrupt(workers: list[Worker]) -> None:
    """Ask every live worker to stop as Ctrl-C does: no new cases, finished records written.

    SIGTERM, not SIGINT: a Ctrl-C at a terminal reaches the workers too (one process
    group), and a second SIGINT is a worker's "stop at once".
    """
    for worker in workers:
        pid = worker.process.pid
        if worker.ended is None and pid is not None and worker.process.is_alive():
            try:
                os.kill(pid, signal.SIGTERM)
            except ProcessLookupError:  # it ended meanwhile
                continue


def stop_on_signal(stop: Callable[[], None]) -> Callable[[int, FrameType | None], None]:
    """A signal handler that calls ``stop``: through the running event loop when there is one.

    Through ``call_soon_threadsafe``, which wakes a loop waiting for I/O; a plain call
    from the handler would run ``stop`` but leave the loop asleep until its next event.
    """

    def handler(signum: int, frame: FrameType | None) -> None:
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # before the worker's loop starts, or after it ended
            stop()
        else:
            loop.call_soon_threadsafe(stop)

    return handler


def readable(worker: Worker, on_message: Callable[[Worker, Message], None], on_eof: Callable[[Worker], None]) -> None:
    """Read every message waiting on a worker's pipe; the pipe's end means the worker is gone."""
    try:
        while worker.connection.poll():
            on_message(worker, receive(worker.connection))
    except (EOFError, OSError):
        on_eof(worker)
