"""Agent suites: case files (YAML, seed Markdown), the async runner, and what ``jurybox run`` does.

``load_suite(path)`` reads and checks a suite file (errors name the file, the
line and the field); ``SuiteRunner(suite).run()`` runs its cases against the
agent, judges each with a cascade (deterministic, then offline similarity,
then LLM judges) and streams records to the store.
"""

from jurybox.suites._case import BuiltJudge, Case, RoundPlan, Suite
from jurybox.suites._case_file import CaseLine, StreamedCases
from jurybox.suites._errors import Problem, SuiteError
from jurybox.suites._executor_choice import EXECUTORS
from jurybox.suites._gc import frozen_heap, paused_collector
from jurybox.suites._judge_model import (
    HOW_TO_ENABLE,
    JudgeModelError,
    judge_model_with_endpoints,
    model_label,
    resolve_judge_model,
)
from jurybox.suites._loader import load_suite
from jurybox.suites._meter import MeteredModel, Spend
from jurybox.suites._plan import CasePlan, RunPlan, plan_run
from jurybox.suites._progress import RichProgress
from jurybox.suites._ray_setup import RAY_EXTRA_MISSING, ExecutorError, RaySettings
from jurybox.suites._registry import (
    TIER_DETERMINISTIC,
    TIER_LLM,
    TIER_SIMILARITY,
    TIERS,
    JudgeFactory,
    JudgeRegistry,
    tier_of,
)
from jurybox.suites._resume import resumable_cases
from jurybox.suites._runner import (
    DEFAULT_CONCURRENCY,
    ProgressSink,
    RunOptions,
    RunResult,
    RunStore,
    SuiteRunner,
)
from jurybox.suites._seed_schema import SPECTOR as SPECTOR_SEED_SCHEMA
from jurybox.suites._seed_schema import FieldRule, SeedSchema
from jurybox.suites._seeds import Seed, load_seed, load_seeds, parse_seed
from jurybox.suites._spec import MAX_CONCURRENCY, MAX_RETRIES, MAX_TIMEOUT
from jurybox.suites._verdict import LLM_SKIP_REASON, LLM_SKIPPED
from jurybox.suites._workers import fork_available

__all__ = [
    "DEFAULT_CONCURRENCY",
    "EXECUTORS",
    "HOW_TO_ENABLE",
    "LLM_SKIPPED",
    "LLM_SKIP_REASON",
    "MAX_CONCURRENCY",
    "MAX_RETRIES",
    "MAX_TIMEOUT",
    "RAY_EXTRA_MISSING",
    "SPECTOR_SEED_SCHEMA",
    "TIERS",
    "TIER_DETERMINISTIC",
    "TIER_LLM",
    "TIER_SIMILARITY",
    "BuiltJudge",
    "Case",
    "CaseLine",
    "CasePlan",
    "ExecutorError",
    "FieldRule",
    "JudgeFactory",
    "JudgeModelError",
    "JudgeRegistry",
    "MeteredModel",
    "Problem",
    "ProgressSink",
    "RaySettings",
    "RichProgress",
    "RoundPlan",
    "RunOptions",
    "RunPlan",
    "RunResult",
    "RunStore",
    "Seed",
    "SeedSchema",
    "Spend",
    "StreamedCases",
    "Suite",
    "SuiteError",
    "SuiteRunner",
    "fork_available",
    "frozen_heap",
    "judge_model_with_endpoints",
    "load_seed",
    "load_seeds",
    "load_suite",
    "model_label",
    "parse_seed",
    "paused_collector",
    "plan_run",
    "resolve_judge_model",
    "resumable_cases",
    "tier_of",
]
