"""Run history: where every run's results are kept, compared and gated.

``open_store()`` opens (creating and migrating) a SQLite file or a PostgreSQL
database; the runner streams each case to it with ``record_case`` so a killed
run can be resumed. Baselines, regressions and lessons are computed from it.
"""

from jurybox.core import CaseRecord, RoundRecord
from jurybox.store._authoring import AuthoringRepository, CaseEdit, CaseVersion, EditConflictError
from jurybox.store._baselines import (
    BASELINE_POLICIES,
    DEFAULT_TARGETS,
    DEFAULT_THRESHOLDS,
    MetricCheck,
    RegressionPolicy,
    RunCheck,
    check_run,
    relative_drop,
)
from jurybox.store._browse import StoreBrowser
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
)
from jurybox.store._calibrations import StoredCalibration
from jurybox.store._compare import CaseChange, RunComparison, compare_runs
from jurybox.store._engine import (
    DEFAULT_URL,
    ENV_VAR,
    StoreError,
    StoreVersionError,
    lock_notice,
    resolve_url,
    schema_head,
)
from jurybox.store._lazy import StoredRecords
from jurybox.store._lessons import lessons_for
from jurybox.store._models import CaseOutcome, Lesson, Rate, RunInfo
from jurybox.store._people import ROLES, AuditEntry, Login, Role, User, UserRepository
from jurybox.store._reviews import JUDGE_IDENTITIES_KEY, LABELS, Review, ReviewItem, ReviewRepository
from jurybox.store._serialize import judgment_from_dict, score_from_dict
from jurybox.store._store import Store, open_store
from jurybox.store._suitefile import SuiteFileError, export_suite_file, import_suite_file, read_suite_file

__all__ = [
    "BASELINE_POLICIES",
    "CASE_SORTS",
    "COMPARE_KINDS",
    "DEFAULT_TARGETS",
    "DEFAULT_THRESHOLDS",
    "DEFAULT_URL",
    "ENV_VAR",
    "JUDGE_IDENTITIES_KEY",
    "LABELS",
    "ROLES",
    "AuditEntry",
    "AuthoringRepository",
    "CaseChange",
    "CaseEdit",
    "CaseHistoryRow",
    "CaseOutcome",
    "CaseQuery",
    "CaseRecord",
    "CaseRow",
    "CaseVersion",
    "ComparedCase",
    "ComparedSide",
    "ComparisonSummary",
    "EditConflictError",
    "JudgeStats",
    "Lesson",
    "Login",
    "MetricCheck",
    "Paged",
    "Rate",
    "RegressionPolicy",
    "Review",
    "ReviewItem",
    "ReviewRepository",
    "Role",
    "RoundRecord",
    "RunCheck",
    "RunComparison",
    "RunInfo",
    "RunStats",
    "Store",
    "StoreBrowser",
    "StoreError",
    "StoreVersionError",
    "StoredCalibration",
    "StoredRecords",
    "SuiteFileError",
    "TierStats",
    "TrendPoint",
    "User",
    "UserRepository",
    "check_run",
    "compare_runs",
    "export_suite_file",
    "import_suite_file",
    "judgment_from_dict",
    "lessons_for",
    "lock_notice",
    "open_store",
    "read_suite_file",
    "relative_drop",
    "resolve_url",
    "schema_head",
    "score_from_dict",
]
