"""What the engine needs of a store, as protocols: ``jurybox.store``'s Store has it, and so may a test's.

The runner opens a run through the store's runs (``store.runs.begin``), writes and reads
its results through the store's results (``store.results``) and closes it with
``store.finish_run``, which also checks a completed run for regressions. Said here, so
the engine never imports ``jurybox.store`` (nor SQLAlchemy) and a test can hand the
runner a store that lives in memory. The fields a run records about itself are
``jurybox.core``'s ``RunDetails``, named once for both sides.

A store may offer more, and the runner uses it when it is there: ``results.planned(run_id)``
(the run's plan, so a resume finishes exactly it), runs that take the plan a chunk at a
time (``PlanLog``: a big plan is written as the run goes), ``lessons.for_run(...)`` (each
case's lessons, see ``_lessons``) and ``before_fork()`` (close connections before workers fork).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from typing import Any, Protocol, Unpack

from jurybox.core import CaseRecord, PlannedCases, RunDetails, RunStatus


class RecordSink(Protocol):
    """Where finished records are written (sync; called on the writer thread only): a store's ``results``."""

    def record(self, run_id: str, record: CaseRecord) -> bool: ...

    def record_many(self, run_id: str, records: Sequence[CaseRecord]) -> list[bool]: ...


class ResultLog(RecordSink, Protocol):
    """A store's results: written as cases finish, read back when the run ends."""

    def recorded(self, run_id: str) -> set[str]: ...

    def records(self, run_id: str, *, cases: Collection[str] | None = None) -> Sequence[CaseRecord]:
        """The run's records of ``cases``: a list in any order, or a lazy sequence in plan order.

        A lazy sequence (the store's) may also count statuses itself with ``status_counts()``,
        so a summary of a big run reads no judgment tree.
        """
        ...


class RunLog(Protocol):
    """A store's runs: where the runner opens its run."""

    def begin(self, suite: str, *, cases: PlannedCases, **details: Unpack[RunDetails]) -> str: ...


class PlanLog(Protocol):
    """A store's runs that take a run's plan a chunk at a time (``jurybox.store``'s do).

    The runner then opens a run with the plan's first chunk and its size, and writes the
    rest while the cases run, one short transaction per chunk (``_plan_writer``).
    """

    def begin(
        self, suite: str, *, cases: PlannedCases, planned: int | None = None, **details: Unpack[RunDetails]
    ) -> str: ...

    def extend_plan(
        self, run_id: str, cases: Sequence[tuple[str, Mapping[str, Any]]], *, first: int, last: bool = False
    ) -> None: ...

    def plan_progress(self, run_id: str) -> tuple[int, int, Sequence[str]]:
        """(plan rows stored, cases the whole plan holds, the selectors the run was started with)."""
        ...


class RunStore(Protocol):
    """What the runner needs from a store (sync; every call goes through the run's one store thread)."""

    @property
    def runs(self) -> RunLog: ...

    @property
    def results(self) -> ResultLog: ...

    def finish_run(self, run_id: str, status: RunStatus = "completed") -> None: ...
