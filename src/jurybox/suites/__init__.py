"""Suites: case files (YAML, Markdown with front matter, JSON Lines), checked and built into cases.

``load_suite(path)`` reads and checks a suite file (every problem names the file,
the line and the field) and builds its cases: judges by name from the plug-in
registry, rounds, SQL checks, seeds. ``plan_run`` says what a run of them will
do before it starts. Running them is ``jurybox.engine``'s job.
"""

from jurybox.suites._case import BuiltJudge, Case, RoundPlan, Suite, seeded_agent
from jurybox.suites._case_file import CaseLine, StreamedCases, case_specs, remaining_cases
from jurybox.suites._errors import Problem, SuiteError
from jurybox.suites._judge_model import (
    HOW_TO_ENABLE,
    JudgeModelError,
    judge_model_with_endpoints,
    model_label,
    resolve_judge_model,
)
from jurybox.suites._judges_file import load_judges
from jurybox.suites._loader import load_suite
from jurybox.suites._plan import CasePlan, RunPlan, plan_run
from jurybox.suites._registry import (
    TIER_DETERMINISTIC,
    TIER_LLM,
    TIER_SIMILARITY,
    TIERS,
    JudgeFactory,
    JudgeRegistry,
    tier_of,
)
from jurybox.suites._schema import suite_schema
from jurybox.suites._seed_schema import SPECTOR as SPECTOR_SEED_SCHEMA
from jurybox.suites._seed_schema import FieldRule, SeedSchema
from jurybox.suites._seeds import Seed, load_seed, load_seeds, parse_seed
from jurybox.suites._spec import MAX_CONCURRENCY, MAX_RETRIES, MAX_TIMEOUT, SqlCheck, SqlExpect

__all__ = [
    "HOW_TO_ENABLE",
    "MAX_CONCURRENCY",
    "MAX_RETRIES",
    "MAX_TIMEOUT",
    "SPECTOR_SEED_SCHEMA",
    "TIERS",
    "TIER_DETERMINISTIC",
    "TIER_LLM",
    "TIER_SIMILARITY",
    "BuiltJudge",
    "Case",
    "CaseLine",
    "CasePlan",
    "FieldRule",
    "JudgeFactory",
    "JudgeModelError",
    "JudgeRegistry",
    "Problem",
    "RoundPlan",
    "RunPlan",
    "Seed",
    "SeedSchema",
    "SqlCheck",
    "SqlExpect",
    "StreamedCases",
    "Suite",
    "SuiteError",
    "case_specs",
    "judge_model_with_endpoints",
    "load_judges",
    "load_seed",
    "load_seeds",
    "load_suite",
    "model_label",
    "parse_seed",
    "plan_run",
    "remaining_cases",
    "resolve_judge_model",
    "seeded_agent",
    "suite_schema",
    "tier_of",
]
