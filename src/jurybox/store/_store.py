"""The store: where it is opened, and the repositories that keep runs, results, suites, metrics and lessons."""

from __future__ import annotations

import logging
from functools import cached_property
from typing import TYPE_CHECKING

from sqlalchemy.engine import Engine
from sqlalchemy.exc import DBAPIError

from jurybox.store._baselines import RegressionPolicy, RunCheck, check_run
from jurybox.store._calibrations import CalibrationRepository
from jurybox.store._cases import SuiteRepository
from jurybox.store._engine import (
    access_error,
    create_store_engine,
    describe,
    migrate,
    resolve_url,
)
from jurybox.store._errors import StoreAccessError
from jurybox.store._lessons import LessonRepository
from jurybox.store._metrics import MetricRepository
from jurybox.store._results import ResultRepository
from jurybox.store._runs import RunRepository, RunStatus

logger = logging.getLogger(__name__)

KEEP_AT_FINISH = 40_000
"""Cases (the run's and its baseline's together) from which ``finish_run`` computes and keeps the run's
comparison with its baseline: the dashboard's default ``compare_inline_cases``, from which it would show
the page first and compute the comparison after. A smaller pair is computed with its page when first
shown (about 0.2 s for two 10,000-case runs) and kept then: a run that may never be compared does not
wait for it at its end."""

if TYPE_CHECKING:
    from jurybox.store._authoring import AuthoringRepository
    from jurybox.store._paired import PairedRepository
    from jurybox.store._people import UserRepository
    from jurybox.store._reviews import ReviewRepository
    from jurybox.store._trace_queue import TraceQueueRepository


class Store:
    """Run history in a SQL database (SQLite file by default, PostgreSQL for teams).

    Build one with :func:`open_store`. Its work is done by one repository per job, each
    an attribute you call directly::

        run_id = store.runs.begin("refunds", cases={"a": {"prompt": "hi"}})
        store.results.record(run_id, record)
        store.finish_run(run_id)
        store.runs.get(run_id).pass_rate

    ``runs`` (start, find and close runs), ``results`` (write and read case records),
    ``suites`` (suites' current cases, import and export), ``metrics`` (pass rates),
    ``lessons``, ``calibrations``, ``reviews``, ``users`` and ``authoring``. What spans
    several of them stays here: finishing a run (then checking a completed one for
    regressions), and the database connections themselves.

    Every write is one short transaction, so results stream to the database as cases
    finish and a killed process loses at most the case it was writing. A Store is safe
    to share between threads; several processes may write one store at once. A database
    that is locked or down raises ``StoreAccessError``, never a SQLAlchemy error.
    """

    def __init__(self, engine: Engine, *, policy: RegressionPolicy | None = None) -> None:
        self._engine = engine
        self.policy = policy or RegressionPolicy()
        """Thresholds, window and targets used when a completed run is checked for regressions."""
        self.runs = RunRepository(engine)
        """Runs: ``begin``, ``get``, ``resolve`` (id, prefix or ``last``), ``latest``, ``newest``, ``update_config``."""
        self.results = ResultRepository(engine)
        """Case results: ``record``, ``record_many``, ``records`` (lazy), ``read_all``, ``stream``, ``recorded``..."""
        self.suites = SuiteRepository(engine)
        """Suites and their current cases: ``names``, ``save`` (a suite file's cases), ``export``."""
        self.metrics = MetricRepository(engine)
        """A run's pass rates (``rates``) and the cases behind a low one (``failing``)."""
        self.lessons = LessonRepository(engine)
        """Regressions' lessons and people's notes: ``find``, ``add_manual``, ``retire``, ``for_run``."""
        self.calibrations = CalibrationRepository(engine)
        """Judges' calibrations: ``save``, ``get``, ``latest``, ``find``."""

    # The dashboard's and the comparisons' repositories are made (and their modules, with the
    # statistics, imported) when first used: `jurybox run` starts without them.

    @cached_property
    def paired(self) -> PairedRepository:
        """Runs compared case by case with paired statistics: ``sides``, ``compare``, ``compare_many``."""
        from jurybox.store._paired import PairedRepository

        return PairedRepository(self._engine)

    @cached_property
    def users(self) -> UserRepository:
        """Dashboard users, their logins and the audit log."""
        from jurybox.store._people import UserRepository

        return UserRepository(self._engine)

    @cached_property
    def reviews(self) -> ReviewRepository:
        """People's reviews of judgments, the review queue and the labelled set they make."""
        from jurybox.store._reviews import ReviewRepository

        return ReviewRepository(self._engine)

    @cached_property
    def authoring(self) -> AuthoringRepository:
        """Cases written one at a time, with history and edit conflicts."""
        from jurybox.store._authoring import AuthoringRepository

        return AuthoringRepository(self._engine)

    @cached_property
    def trace_queue(self) -> TraceQueueRepository:
        """Traces received over OTLP waiting to be judged (``jurybox serve --otlp``)."""
        from jurybox.store._trace_queue import TraceQueueRepository

        return TraceQueueRepository(self._engine)

    @property
    def url(self) -> str:
        """The store's URL, password hidden."""
        return describe(self._engine.url)

    @property
    def engine(self) -> Engine:
        """The SQLAlchemy engine, for ad-hoc SQL over the documented tables."""
        return self._engine

    def finish_run(self, run_id: str, status: RunStatus = "completed") -> None:
        """Close a run with a final status and its totals.

        A completed run is then checked against its suite's baselines with
        :attr:`policy`; each regression found is written as a lesson. A run of
        ``KEEP_AT_FINISH`` cases or more with its baseline (the suite's latest completed
        run before it) has that comparison computed and kept, so the dashboard's "compare
        with baseline" opens at once; a smaller pair is computed when it is first shown.

        Raises:
            ValueError: ``status`` is not completed, interrupted or failed.
            StoreError: the run does not exist.
        """
        self.runs.finish(run_id, status)
        if status == "completed":
            self.check_regressions(run_id)
            run = self.runs.get(run_id)
            # Read from the runs' rows: a small pair costs no comparison module imported.
            baseline = self.runs.before(run, 1, statuses=("completed",))
            if baseline and run.recorded + baseline[0].recorded >= KEEP_AT_FINISH:
                keep_baseline_comparison(self._engine, run_id)

    def check_regressions(
        self, run_id: str, policy: RegressionPolicy | None = None, *, record_lessons: bool = True
    ) -> RunCheck:
        """Compare a run with its suite's baselines; write a lesson per regression when asked."""
        return check_run(self, run_id, policy or self.policy, record_lessons=record_lessons)

    def close(self) -> None:
        """Release every pooled connection."""
        self._engine.dispose()

    def before_fork(self) -> None:
        """Close the pooled connections before this process forks (``jurybox run --workers``).

        A database connection must not cross a fork: SQLite forbids using one in the
        child, and a child that closed its inherited copy could disturb the parent's.
        The store opens new connections in each process as it needs them.
        """
        self._engine.dispose()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()


def keep_baseline_comparison(engine: Engine, run_id: str) -> None:
    """Compute and keep (``run_comparisons``) the run against the suite's latest completed run before it.

    A cache: a store that cannot be read or written just now is logged and left alone, and the
    dashboard computes the comparison when it is first shown.
    """
    # Imported here: the comparisons need the statistics, which `jurybox run` does not import otherwise.
    from jurybox.store._browse_compare import CompareBrowser
    from jurybox.store._browse_runs import RunBrowser
    from jurybox.store._browse_stats import StatsBrowser

    runs = RunBrowser(engine)
    try:
        run = runs.find(run_id)
        baseline = runs.previous(run, completed=True) if run is not None else None
        if run is None or baseline is None:
            return
        comparisons = CompareBrowser(engine, cache_size=2, stats=StatsBrowser(engine, cache_size=2))
        comparisons.compare(baseline, run)
        comparisons.paired(baseline, run)
    except (StoreAccessError, DBAPIError) as exc:
        logger.warning("comparison of run %s with its baseline not kept (computed when shown): %s", run_id, exc)


def open_store(url: str | None = None, *, policy: RegressionPolicy | None = None, busy_timeout: float = 30.0) -> Store:
    """Open (creating and migrating as needed) the store at ``url``.

    ``url`` defaults to ``JURYBOX_STORE``, then ``sqlite:///.jurybox/jurybox.db``
    (its folder is created). ``postgresql://`` URLs use psycopg 3.

    Raises:
        StoreVersionError: the store was written by a newer jurybox.
        StoreAccessError: the database is locked or cannot be reached (trying again may work).
        StoreError: the URL is invalid or the database is not a jurybox store.
    """
    engine = create_store_engine(resolve_url(url), busy_timeout=busy_timeout)
    try:
        migrate(engine)
    except DBAPIError as exc:  # locked or down while migrating: the store's own error, as every later read
        engine.dispose()
        raise access_error(engine.url, exc) from exc
    except BaseException:
        engine.dispose()
        raise
    return Store(engine, policy=policy)
