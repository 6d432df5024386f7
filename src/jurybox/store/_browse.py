"""Read-only queries for browsing a store: pages of runs and cases, one case, comparisons and trends.

The dashboard (``jurybox serve``) reads through :class:`StoreBrowser`. Every
query is bounded: lists come a page at a time (``LIMIT``/``OFFSET`` on the
server), a case is read by its unique ``(run_id, case_name)`` key, and nothing
reads a whole run's verdict trees.

``StoreBrowser`` holds no SQL, as :class:`~jurybox.store.Store` holds none:
each method hands its work to the part that does that job, all sharing one
engine:

- ``_cases.py``, ``SuiteRepository`` (the store's own): the suites.
- ``_browse_runs.py``, ``RunBrowser``: runs newest first, filtered, a page at a time; one run;
  the runs before it.
- ``_browse_stats.py``, ``StatsBrowser``: a run's pass rates overall, per tier and per judge,
  its latency and tags; the gate's verdict on it.
- ``_browse_cases.py``, ``CaseBrowser``: a page of a run's cases, filtered and sorted; one case
  whole; its status in the suite's recent runs.
- ``_browse_compare.py``, ``CompareBrowser``: run A against run B, and a page of one kind of change.
- ``_browse_trends.py``, ``TrendBrowser``: a suite's trend with baselines and gate states, and
  each case's status per run.
- ``_browse_models.py``: what they return (``Paged``, ``RunStats``, ``CaseRow``, ...).
- ``_browse_cache.py``, ``LruCache``: the aggregates of final runs, kept until a run is resumed.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy.engine import Engine

from jurybox.core import CaseRecord, Status
from jurybox.store._baselines import MetricCheck, RegressionPolicy
from jurybox.store._browse_cases import CaseBrowser
from jurybox.store._browse_compare import CompareBrowser
from jurybox.store._browse_models import (
    CaseHistoryRow,
    CaseQuery,
    CaseRow,
    ComparedCase,
    ComparisonSummary,
    Paged,
    RunStats,
    TrendPoint,
)
from jurybox.store._browse_runs import RunBrowser
from jurybox.store._browse_stats import StatsBrowser
from jurybox.store._browse_trends import TrendBrowser
from jurybox.store._cases import SuiteRepository
from jurybox.store._models import RunInfo


class StoreBrowser:
    """Read-only, paginated queries over a store's runs, for the dashboard and scripts.

    Build it on an open store's engine: ``StoreBrowser(store.engine)``. It never
    writes, and it is safe to share between threads.

    Args:
        engine: The open store's engine.
        cache_size: Final runs whose stats are kept in memory.
        comparison_cache: Comparisons kept in memory (each holds both runs' case names).
    """

    def __init__(self, engine: Engine, *, cache_size: int = 4096, comparison_cache: int = 8) -> None:
        self._suites = SuiteRepository(engine)
        self._runs = RunBrowser(engine)
        self._stats = StatsBrowser(engine, cache_size=cache_size)
        self._cases = CaseBrowser(engine)
        self._comparisons = CompareBrowser(engine, cache_size=comparison_cache)
        self._trends = TrendBrowser(engine, self._stats)

    # Runs -------------------------------------------------------------------------------------

    def suites(self) -> list[str]:
        """Every suite name, sorted."""
        return self._suites.suites()

    def runs_page(
        self,
        *,
        suite: str | None = None,
        status: str | None = None,
        since: datetime | None = None,
        until: datetime | None = None,
        offset: int = 0,
        limit: int = 50,
    ) -> Paged[RunInfo]:
        """Runs, newest first, filtered by suite, status and start time (``since`` <= started < ``until``)."""
        return self._runs.runs_page(suite=suite, status=status, since=since, until=until, offset=offset, limit=limit)

    def run(self, run_id: str) -> RunInfo | None:
        """The run with exactly this id, or None."""
        return self._runs.run(run_id)

    def previous_run(self, run: RunInfo, *, completed: bool = False) -> RunInfo | None:
        """The suite's run that started just before ``run`` (the latest completed one with ``completed``)."""
        return self._runs.previous_run(run, completed=completed)

    def run_stats(self, run: RunInfo) -> RunStats:
        """Tier and judge pass rates, mean scores, latency percentiles and tags of a run."""
        return self._stats.run_stats(run)

    def check(self, run: RunInfo, policy: RegressionPolicy) -> list[MetricCheck]:
        """The gate's verdict on ``run`` (``MetricCheck`` per metric), as ``jurybox gate`` computes it."""
        return self._stats.check(run, policy)

    # Cases ------------------------------------------------------------------------------------

    def case_page(self, run: RunInfo, query: CaseQuery) -> Paged[CaseRow]:
        """One page of a run's cases, filtered and sorted on the server."""
        return self._cases.case_page(run, query)

    def case_record(self, run_id: str, case_name: str) -> CaseRecord | None:
        """One case of a run with its whole verdict tree, rounds and context, or None."""
        return self._cases.case_record(run_id, case_name)

    def case_definition(self, run_id: str, case_name: str) -> dict[str, Any] | None:
        """The definition (the suite file's case) of the version this run ran, or None."""
        return self._cases.case_definition(run_id, case_name)

    def neighbour_cases(self, run_id: str, case_name: str) -> tuple[str | None, str | None]:
        """The cases before and after ``case_name`` in name order (for previous / next links)."""
        return self._cases.neighbour_cases(run_id, case_name)

    def case_in_runs(self, suite: str, case_name: str, *, limit: int = 20) -> list[tuple[RunInfo, Status | None]]:
        """The case's status in the suite's last ``limit`` runs, newest first (None: not in that run)."""
        return self._cases.case_in_runs(suite, case_name, limit=limit)

    # Comparisons ------------------------------------------------------------------------------

    def compare(self, run_a: RunInfo, run_b: RunInfo) -> ComparisonSummary:
        """Run A against run B with the figures of ``jurybox compare`` (cached when both runs are final)."""
        return self._comparisons.compare(run_a, run_b)

    def compared_cases(
        self, comparison: ComparisonSummary, kind: str, *, offset: int = 0, limit: int = 50
    ) -> Paged[ComparedCase]:
        """One page of a comparison's cases of one kind, with both sides read from the store."""
        return self._comparisons.compared_cases(comparison, kind, offset=offset, limit=limit)

    # Trends -----------------------------------------------------------------------------------

    def trend(self, suite: str, *, limit: int, policy: RegressionPolicy) -> list[TrendPoint]:
        """The suite's last ``limit`` runs, oldest first, each with its stats, baselines and gate states.

        A point's baseline and state are computed as ``jurybox gate`` would for
        that run: the mean over the ``window`` completed runs before it.
        """
        return self._trends.trend(suite, limit=limit, policy=policy)

    def case_history(
        self, suite: str, *, runs: int = 20, offset: int = 0, limit: int = 50
    ) -> tuple[list[RunInfo], Paged[CaseHistoryRow]]:
        """Each case's status over the suite's last ``runs`` runs, flakiest first.

        A case is flaky when it passed in some of those runs and not in others;
        ``flips`` counts the changes between pass and not-pass from run to run.
        """
        return self._trends.case_history(suite, runs=runs, offset=offset, limit=limit)
