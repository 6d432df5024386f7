"""The store: one facade over the repositories that keep runs, results, suites, metrics and lessons."""

from __future__ import annotations

from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from typing import Any

from sqlalchemy.engine import Engine

from jurybox.core import CaseRecord, LessonNote
from jurybox.store._authoring import AuthoringRepository
from jurybox.store._baselines import RegressionPolicy, RunCheck, check_run
from jurybox.store._calibrations import CalibrationRepository, JsonMap, StoredCalibration
from jurybox.store._cases import SuiteRepository
from jurybox.store._engine import create_store_engine, describe, migrate, resolve_url
from jurybox.store._lazy import RunRecords, StoredRecords
from jurybox.store._lessons import LESSON_POOL, LessonRepository, lessons_for_cases
from jurybox.store._metrics import FAILING_LIMIT, MetricRepository
from jurybox.store._models import CaseOutcome, Lesson, Rate, RunInfo
from jurybox.store._people import UserRepository
from jurybox.store._results import READ_BATCH, ResultRepository
from jurybox.store._reviews import ReviewRepository
from jurybox.store._runs import RunRepository, RunStatus

STREAM_BATCH = 100
"""Results read per batch when a run's records are streamed back."""

_DONE = ("completed",)  # the runs a baseline averages by default


class Store:
    """Run history in a SQL database (SQLite file by default, PostgreSQL for teams).

    Build one with :func:`open_store`. Every write is one short transaction,
    so results stream to the database as cases finish and a killed process
    loses at most the case it was writing. A Store is safe to share between
    threads; several processes may write one store at once.

    Each method hands its work to the repository of its tables (the private
    attributes ``_runs``, ``_results``, ``_suites``, ``_metrics``,
    ``_lessons`` and ``_calibrations``, one module each). What is built from other methods stays
    here, on the Store, so it goes through them: finishing a completed run
    checks it for regressions (runs, metrics and lessons together), and
    ``missing_cases``, ``run_records`` and ``records`` are made of the
    result reads.
    """

    def __init__(self, engine: Engine, *, policy: RegressionPolicy | None = None) -> None:
        self._engine = engine
        self.policy = policy or RegressionPolicy()
        """Thresholds, window and targets used when a completed run is checked for regressions."""
        self._runs = RunRepository(engine)
        self._results = ResultRepository(engine)
        self._suites = SuiteRepository(engine)
        self._metrics = MetricRepository(engine)
        self._lessons = LessonRepository(engine)
        self.lesson_book = self._lessons
        """Lessons people add and retire (``add_manual_lesson``, ``retire_lesson``); see ``lessons``."""
        self._calibrations = CalibrationRepository(engine)
        self.users = UserRepository(engine)
        """Dashboard users, their logins and the audit log."""
        self.reviews = ReviewRepository(engine)
        """People's reviews of judgments, the review queue and the labelled set they make."""
        self.authoring = AuthoringRepository(engine)
        """Cases written one at a time, with history and edit conflicts."""

    @property
    def url(self) -> str:
        """The store's URL, password hidden."""
        return describe(self._engine.url)

    @property
    def engine(self) -> Engine:
        """The SQLAlchemy engine, for ad-hoc SQL over the documented tables."""
        return self._engine

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

    # Runs -------------------------------------------------------------------------------------

    def begin_run(
        self,
        suite: str,
        *,
        cases: Mapping[str, Mapping[str, Any]] | Iterable[tuple[str, Mapping[str, Any]]],
        judge_model: str | None = None,
        agent_version: str | None = None,
        git_commit: str | None = None,
        config: Mapping[str, Any] | None = None,
    ) -> str:
        """Start a run of ``suite`` over ``cases`` (name -> definition, or pairs read once) and return its id.

        Each definition is stored as a version of its case, and the run records which versions it ran.
        """
        return self._runs.begin_run(
            suite,
            cases=cases,
            judge_model=judge_model,
            agent_version=agent_version,
            git_commit=git_commit,
            config=config,
        )

    def record_case(self, run_id: str, record: CaseRecord) -> bool:
        """Write one case's result, its rounds and every judge's judgment in one transaction.

        Returns False, changing nothing, when the run already has this case.
        Writing to an interrupted or failed run reopens it (status running).

        Raises:
            StoreError: the run does not exist or is already completed.
        """
        return self.record_cases(run_id, [record])[0]

    def record_cases(self, run_id: str, records: Sequence[CaseRecord]) -> list[bool]:
        """Write several finished cases in one transaction: all of them or, on any error, none.

        What a busy runner's writer does with the cases that finished while it
        was writing: one commit for the lot costs far less than one per case.
        Returns, per record, False when the run already had that case.

        Raises:
            StoreError: the run does not exist or is already completed.
        """
        return self._results.record_cases(run_id, records)

    def recorded_cases(self, run_id: str) -> set[str]:
        """Names of the cases the run has results for."""
        return self._results.recorded_cases(run_id)

    def planned_cases(self, run_id: str) -> list[str]:
        """Names of the cases the run was asked to run, in order."""
        return self._results.planned_cases(run_id)

    def missing_cases(self, run_id: str) -> list[str]:
        """Planned cases with no result yet, in plan order: what a resume still has to judge."""
        done = self.recorded_cases(run_id)
        return [name for name in self.planned_cases(run_id) if name not in done]

    def finish_run(self, run_id: str, status: RunStatus = "completed") -> None:
        """Close a run with a final status and its totals.

        A completed run is then checked against its suite's baselines with
        :attr:`policy`; each regression found is written as a lesson.

        Raises:
            ValueError: ``status`` is not completed, interrupted or failed.
            StoreError: the run does not exist.
        """
        self._runs.finish_run(run_id, status)
        if status == "completed":
            self.check_regressions(run_id)

    def check_regressions(
        self, run_id: str, policy: RegressionPolicy | None = None, *, record_lessons: bool = True
    ) -> RunCheck:
        """Compare a run with its suite's baselines; write a lesson per regression when asked."""
        return check_run(self, run_id, policy or self.policy, record_lessons=record_lessons)

    def update_run_config(self, run_id: str, values: Mapping[str, Any]) -> None:
        """Merge ``values`` into the run's config (known only after the run); StoreError for an unknown run."""
        self._runs.update_run_config(run_id, values)

    def get_run(self, run_id: str) -> RunInfo:
        """The run with this exact id.

        Raises:
            StoreError: no such run.
        """
        return self._runs.get_run(run_id)

    def resolve_run(self, ref: str, *, suite: str | None = None) -> RunInfo:
        """A run by id, unique id prefix, or ``last`` (the latest run, of ``suite`` when given).

        Raises:
            StoreError: nothing matches, or a prefix matches several runs.
        """
        return self._runs.resolve_run(ref, suite=suite)

    def latest_run(self, suite: str | None = None, *, unfinished: bool = False) -> RunInfo | None:
        """The most recently started run (of ``suite``), or with ``unfinished`` the latest not completed."""
        return self._runs.latest_run(suite, unfinished=unfinished)

    def runs(self, suite: str | None = None, *, status: str | None = None, limit: int | None = None) -> list[RunInfo]:
        """Runs, newest first, optionally of one suite and one status."""
        return self._runs.runs(suite, status=status, limit=limit)

    def completed_runs_before(self, run: RunInfo, limit: int, *, statuses: Sequence[str] = _DONE) -> list[RunInfo]:
        """Up to ``limit`` runs of ``run``'s suite that started before it and ended as ``statuses``, newest first."""
        return self._runs.runs_before(run, limit, statuses=statuses)

    def suites(self) -> list[str]:
        """Names of every suite in the store."""
        return self._suites.suites()

    # Records ----------------------------------------------------------------------------------

    def run_records(self, run_id: str) -> list[CaseRecord]:
        """The whole run's records in plan order, judgment trees rebuilt (resumed parts included)."""
        return list(self.iter_records(run_id))

    def records(self, run_id: str, *, cases: Collection[str] | None = None) -> StoredRecords:
        """The run's records (only ``cases``, or all) read from the store on each pass: flat memory for any size."""
        # Smaller batches than a bulk read: a report pass holds one batch of rebuilt trees at a time.
        if cases is None:  # the whole run: nothing held per case, so a run of a million reads back flat
            return RunRecords(self, self._results, run_id, batch=STREAM_BATCH)
        return StoredRecords(
            self.case_outcomes(run_id),
            lambda wanted: self.iter_records(run_id, batch=STREAM_BATCH, cases=wanted),
            cases=cases,
        )

    def iter_records(
        self, run_id: str, *, batch: int = READ_BATCH, cases: Collection[str] | None = None, up_to: int | None = None
    ) -> Iterator[CaseRecord]:
        """Stream a run's records in plan order, ``batch`` results at a time (flat memory for big runs).

        Args:
            run_id: The run.
            batch: Results read at a time.
            cases: Only these cases (None: every recorded case); the rows of other cases are
                skipped before their judgment trees are decoded or rebuilt.
            up_to: Leave out results with a higher id (those written after a snapshot).
        """
        # The repository's generator itself, not a ``yield from`` over it: no extra step per record.
        return self._results.iter_records(run_id, batch=batch, cases=cases, up_to=up_to)

    def case_outcomes(self, run_id: str) -> list[CaseOutcome]:
        """Every case's summary in a run (no trees), in plan order."""
        return self._results.case_outcomes(run_id)

    # Metrics and lessons ----------------------------------------------------------------------

    def run_metrics(self, run_id: str) -> dict[str, Rate]:
        """Pass rates of a run: ``overall`` (cases) and one per cascade tier.

        A tier's rate counts the judgments of that tier (the top-level children
        of cascade judgments), one per case, or per round when rounds are
        judged by a cascade; only cases that reached the tier count.
        """
        return self._metrics.run_metrics(run_id)

    def failing_cases(
        self, run_id: str, metric: str, *, limit: int = FAILING_LIMIT
    ) -> tuple[list[dict[str, Any]], int]:
        """Cases that did not pass ``metric`` (``overall`` or a tier) with their reasons, and how many in all."""
        return self._metrics.failing_cases(run_id, metric, limit=limit)

    def add_lesson(self, run_id: str, **lesson: Any) -> bool:
        """Store a regression's lesson (``LessonRepository.add_lesson``); False when the run has one for its metric."""
        return self._lessons.add_lesson(run_id, **lesson)

    def lessons(
        self, suite: str | None = None, *, topic: str | None = None, limit: int | None = 20, **kinds: bool
    ) -> list[Lesson]:
        """Active regression lessons, newest first (``manual=True``: people's too; ``retired=True``: retired too).

        ``topic`` matches a metric (tier) name or any word of the lesson text.
        """
        return self._lessons.lessons(suite, topic=topic, limit=limit, **kinds)

    def lessons_for_run(
        self, suite: str, cases: Mapping[str, Collection[str]], *, limit: int, max_chars: int
    ) -> dict[str, list[LessonNote]]:
        """Each case's lessons (case -> its judges' names and tiers), in one query: ``RunStore.lessons_for_run``."""
        found = self._lessons.lessons(suite, limit=LESSON_POOL, manual=True)
        return lessons_for_cases(found, cases, limit=limit, max_chars=max_chars)

    # Calibrations -----------------------------------------------------------------------------

    def save_calibration(self, identity: JsonMap, *, figures: JsonMap, calibration: JsonMap, dataset: str) -> int:
        """File a judge's calibration under ``identity["key"]`` and ``identity["name"]``; every value plain JSON."""
        return self._calibrations.save_calibration(identity, figures=figures, calibration=calibration, dataset=dataset)

    def calibration(self, calibration_id: int) -> StoredCalibration:
        """The calibration with this id (StoreError when there is none)."""
        return self._calibrations.calibration(calibration_id)

    def latest_calibration(self, key: str) -> StoredCalibration | None:
        """The newest calibration of the judge whose identity has this ``key``, or None."""
        return self._calibrations.latest_calibration(key)

    def calibrations(self, name: str | None = None, *, limit: int | None = 50) -> list[StoredCalibration]:
        """Calibrations newest first, of the judge called ``name`` (any key) when given."""
        return self._calibrations.calibrations(name, limit=limit)

    # Suite files ------------------------------------------------------------------------------

    def import_suite(
        self,
        name: str,
        cases: Sequence[tuple[str, Mapping[str, Any]]],
        *,
        agent: Mapping[str, Any] | None = None,
        defaults: Mapping[str, Any] | None = None,
        settings: Mapping[str, Any] | None = None,
    ) -> dict[str, int]:
        """Make ``cases`` the suite's current cases (edited ones get a version, absent ones are retired).

        Returns counts: ``added``, ``changed``, ``unchanged`` and ``retired`` (current before, absent now).
        """
        return self._suites.import_suite(name, cases, agent=agent, defaults=defaults, settings=settings)

    def export_suite(self, name: str) -> dict[str, Any]:
        """The suite's current cases in the suite-file shape ``{name, agent, defaults, cases}``.

        Raises:
            StoreError: no such suite.
        """
        return self._suites.export_suite(name)


def open_store(url: str | None = None, *, policy: RegressionPolicy | None = None, busy_timeout: float = 30.0) -> Store:
    """Open (creating and migrating as needed) the store at ``url``.

    ``url`` defaults to ``JURYBOX_STORE``, then ``sqlite:///.jurybox/jurybox.db``
    (its folder is created). ``postgresql://`` URLs use psycopg 3.

    Raises:
        StoreVersionError: the store was written by a newer jurybox.
        StoreError: the URL is invalid or the database is not a jurybox store.
    """
    engine = create_store_engine(resolve_url(url), busy_timeout=busy_timeout)
    try:
        migrate(engine)
    except BaseException:
        engine.dispose()
        raise
    return Store(engine, policy=policy)
