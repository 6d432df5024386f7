"""Run history: where every run's results are kept, compared and gated.

``open_store()`` opens (creating and migrating) a SQLite file or a PostgreSQL
database. Its work is done by repositories you call directly: ``store.runs``
(start, find and close runs), ``store.results`` (the runner streams each finished
case there, so a killed run can be resumed), ``store.suites``, ``store.metrics``,
``store.lessons``, ``store.calibrations``, ``store.reviews``, ``store.users``,
``store.authoring`` and ``store.paired`` (runs compared case by case with paired
statistics; ``check_significance`` is the gate that knows noise); the dashboard
reads through ``StoreBrowser``. Baselines, regressions and lessons are computed
from it. A storage failure is a
``StoreError`` (the request cannot be met) or a ``StoreAccessError`` (the
database is locked or down): nothing outside this package sees SQLAlchemy.
"""

import importlib
from typing import TYPE_CHECKING, Any

from jurybox.core import CaseRecord, RoundRecord

if TYPE_CHECKING:
    from jurybox.store._authoring import AuthoringRepository, CaseEdit, CaseVersion, EditConflictError
    from jurybox.store._baselines import (
        BASELINE_POLICIES,
        DEFAULT_TARGETS,
        DEFAULT_THRESHOLDS,
        MetricCheck,
        RegressionPolicy,
        RunCheck,
        baseline_runs,
        check_run,
        relative_drop,
    )
    from jurybox.store._browse import StoreBrowser
    from jurybox.store._browse_cases import CaseBrowser
    from jurybox.store._browse_compare import CompareBrowser
    from jurybox.store._browse_models import (
        CASE_SORTS,
        COMPARE_KINDS,
        CaseHistoryRow,
        CaseQuery,
        CaseRow,
        ComparedCase,
        ComparedSide,
        ComparisonSummary,
        JudgeStats,
        Paged,
        RunStats,
        TierStats,
        TrendPoint,
        first_kind,
    )
    from jurybox.store._browse_runs import RunBrowser
    from jurybox.store._browse_stats import StatsBrowser
    from jurybox.store._browse_trends import TrendBrowser
    from jurybox.store._calibrations import CalibrationRepository, StoredCalibration
    from jurybox.store._cases import SuiteRepository
    from jurybox.store._compare import CaseChange, RunComparison, compare_runs, resolve_runs
    from jurybox.store._engine import DEFAULT_URL, ENV_VAR, lock_notice, resolve_url, schema_head, shown_url, store_file
    from jurybox.store._errors import StoreAccessError, StoreError, StoreVersionError
    from jurybox.store._lazy import StoredRecords
    from jurybox.store._lessons import LessonRepository, lessons_for
    from jurybox.store._metrics import MetricRepository
    from jurybox.store._models import CaseOutcome, Lesson, Rate, RunInfo
    from jurybox.store._paired import TRIALS_KEY, PairedRepository, RunSides
    from jurybox.store._paired_models import JudgeCorrection, PairedRuns
    from jurybox.store._people import ALL_ROLES, INGEST_ROLE, ROLES, AuditEntry, Login, Role, User, UserRepository
    from jurybox.store._plans import PlanProgress
    from jurybox.store._rebuild import judgment_from_dict, score_from_dict
    from jurybox.store._results import ResultRepository
    from jurybox.store._review_queue import QueueEntry, QueueFilter, QueuePage
    from jurybox.store._reviews import JUDGE_IDENTITIES_KEY, LABELS, Review, ReviewItem, ReviewRepository
    from jurybox.store._runs import RunRepository
    from jurybox.store._significance import SignificanceCheck, SignificanceResult, check_significance
    from jurybox.store._store import Store, open_store
    from jurybox.store._suitefile import SuiteFileError, export_suite_file, import_suite_file, read_suite_file

# Imported when first named: a command loads the parts of the store it uses, and only when it uses
# them (`jurybox run` imports SQLAlchemy while its judge server's check waits for an answer; the
# dashboard's readers, comparisons and people are no part of a run at all). The errors and the
# lazy record sequence are light: naming them loads no database code.
_LAZY = {
    "BASELINE_POLICIES": "jurybox.store._baselines",
    "DEFAULT_TARGETS": "jurybox.store._baselines",
    "DEFAULT_THRESHOLDS": "jurybox.store._baselines",
    "MetricCheck": "jurybox.store._baselines",
    "RegressionPolicy": "jurybox.store._baselines",
    "RunCheck": "jurybox.store._baselines",
    "baseline_runs": "jurybox.store._baselines",
    "check_run": "jurybox.store._baselines",
    "relative_drop": "jurybox.store._baselines",
    "CalibrationRepository": "jurybox.store._calibrations",
    "StoredCalibration": "jurybox.store._calibrations",
    "SuiteRepository": "jurybox.store._cases",
    "DEFAULT_URL": "jurybox.store._engine",
    "ENV_VAR": "jurybox.store._engine",
    "lock_notice": "jurybox.store._engine",
    "resolve_url": "jurybox.store._engine",
    "schema_head": "jurybox.store._engine",
    "shown_url": "jurybox.store._engine",
    "store_file": "jurybox.store._engine",
    "StoredRecords": "jurybox.store._lazy",
    "LessonRepository": "jurybox.store._lessons",
    "lessons_for": "jurybox.store._lessons",
    "MetricRepository": "jurybox.store._metrics",
    "CaseOutcome": "jurybox.store._models",
    "Lesson": "jurybox.store._models",
    "Rate": "jurybox.store._models",
    "RunInfo": "jurybox.store._models",
    "PlanProgress": "jurybox.store._plans",
    "judgment_from_dict": "jurybox.store._rebuild",
    "score_from_dict": "jurybox.store._rebuild",
    "ResultRepository": "jurybox.store._results",
    "RunRepository": "jurybox.store._runs",
    "Store": "jurybox.store._store",
    "open_store": "jurybox.store._store",
    "StoreAccessError": "jurybox.store._errors",
    "StoreError": "jurybox.store._errors",
    "StoreVersionError": "jurybox.store._errors",
    "ALL_ROLES": "jurybox.store._people",
    "AuditEntry": "jurybox.store._people",
    "AuthoringRepository": "jurybox.store._authoring",
    "CASE_SORTS": "jurybox.store._browse_models",
    "COMPARE_KINDS": "jurybox.store._browse_models",
    "CaseBrowser": "jurybox.store._browse_cases",
    "CaseChange": "jurybox.store._compare",
    "CaseEdit": "jurybox.store._authoring",
    "CaseHistoryRow": "jurybox.store._browse_models",
    "CaseQuery": "jurybox.store._browse_models",
    "CaseRow": "jurybox.store._browse_models",
    "CaseVersion": "jurybox.store._authoring",
    "CompareBrowser": "jurybox.store._browse_compare",
    "ComparedCase": "jurybox.store._browse_models",
    "ComparedSide": "jurybox.store._browse_models",
    "ComparisonSummary": "jurybox.store._browse_models",
    "EditConflictError": "jurybox.store._authoring",
    "INGEST_ROLE": "jurybox.store._people",
    "JUDGE_IDENTITIES_KEY": "jurybox.store._reviews",
    "JudgeCorrection": "jurybox.store._paired_models",
    "JudgeStats": "jurybox.store._browse_models",
    "LABELS": "jurybox.store._reviews",
    "Login": "jurybox.store._people",
    "Paged": "jurybox.store._browse_models",
    "PairedRepository": "jurybox.store._paired",
    "PairedRuns": "jurybox.store._paired_models",
    "QueueEntry": "jurybox.store._review_queue",
    "QueueFilter": "jurybox.store._review_queue",
    "QueuePage": "jurybox.store._review_queue",
    "ROLES": "jurybox.store._people",
    "Review": "jurybox.store._reviews",
    "ReviewItem": "jurybox.store._reviews",
    "ReviewRepository": "jurybox.store._reviews",
    "Role": "jurybox.store._people",
    "RunBrowser": "jurybox.store._browse_runs",
    "RunComparison": "jurybox.store._compare",
    "RunSides": "jurybox.store._paired",
    "RunStats": "jurybox.store._browse_models",
    "SignificanceCheck": "jurybox.store._significance",
    "SignificanceResult": "jurybox.store._significance",
    "StatsBrowser": "jurybox.store._browse_stats",
    "StoreBrowser": "jurybox.store._browse",
    "SuiteFileError": "jurybox.store._suitefile",
    "TRIALS_KEY": "jurybox.store._paired",
    "TierStats": "jurybox.store._browse_models",
    "TrendBrowser": "jurybox.store._browse_trends",
    "TrendPoint": "jurybox.store._browse_models",
    "User": "jurybox.store._people",
    "UserRepository": "jurybox.store._people",
    "check_significance": "jurybox.store._significance",
    "compare_runs": "jurybox.store._compare",
    "first_kind": "jurybox.store._browse_models",
    "export_suite_file": "jurybox.store._suitefile",
    "import_suite_file": "jurybox.store._suitefile",
    "read_suite_file": "jurybox.store._suitefile",
    "resolve_runs": "jurybox.store._compare",
}

__all__ = [
    "ALL_ROLES",
    "BASELINE_POLICIES",
    "CASE_SORTS",
    "COMPARE_KINDS",
    "DEFAULT_TARGETS",
    "DEFAULT_THRESHOLDS",
    "DEFAULT_URL",
    "ENV_VAR",
    "INGEST_ROLE",
    "JUDGE_IDENTITIES_KEY",
    "LABELS",
    "ROLES",
    "TRIALS_KEY",
    "AuditEntry",
    "AuthoringRepository",
    "CalibrationRepository",
    "CaseBrowser",
    "CaseChange",
    "CaseEdit",
    "CaseHistoryRow",
    "CaseOutcome",
    "CaseQuery",
    "CaseRecord",
    "CaseRow",
    "CaseVersion",
    "CompareBrowser",
    "ComparedCase",
    "ComparedSide",
    "ComparisonSummary",
    "EditConflictError",
    "JudgeCorrection",
    "JudgeStats",
    "Lesson",
    "LessonRepository",
    "Login",
    "MetricCheck",
    "MetricRepository",
    "Paged",
    "PairedRepository",
    "PairedRuns",
    "PlanProgress",
    "QueueEntry",
    "QueueFilter",
    "QueuePage",
    "Rate",
    "RegressionPolicy",
    "ResultRepository",
    "Review",
    "ReviewItem",
    "ReviewRepository",
    "Role",
    "RoundRecord",
    "RunBrowser",
    "RunCheck",
    "RunComparison",
    "RunInfo",
    "RunRepository",
    "RunSides",
    "RunStats",
    "SignificanceCheck",
    "SignificanceResult",
    "StatsBrowser",
    "Store",
    "StoreAccessError",
    "StoreBrowser",
    "StoreError",
    "StoreVersionError",
    "StoredCalibration",
    "StoredRecords",
    "SuiteFileError",
    "SuiteRepository",
    "TierStats",
    "TrendBrowser",
    "TrendPoint",
    "User",
    "UserRepository",
    "baseline_runs",
    "check_run",
    "check_significance",
    "compare_runs",
    "export_suite_file",
    "first_kind",
    "import_suite_file",
    "judgment_from_dict",
    "lessons_for",
    "lock_notice",
    "open_store",
    "read_suite_file",
    "relative_drop",
    "resolve_runs",
    "resolve_url",
    "schema_head",
    "score_from_dict",
    "shown_url",
    "store_file",
]


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
