"""Suites: case files (YAML, Markdown with front matter, JSON Lines), checked and built into cases.

``load_suite(path)`` reads and checks a suite file (every problem names the file,
the line and the field) and builds its cases: judges by name from the plug-in
registry, rounds, SQL checks, seeds. ``plan_run`` says what a run of them will
do before it starts. Running them is ``jurybox.engine``'s job.

The seed file reader and its schemas load when one of their names is first used
(a suite with seeds, or ``jurybox.suites.load_seeds``): a run of a suite without
seeds never needs them.
"""

import importlib
from typing import TYPE_CHECKING, Any

from jurybox.suites._case import BuiltJudge, Case, RoundPlan, Suite, seeded_agent
from jurybox.suites._case_file import CaseLine, StreamedCases, case_specs, remaining_cases
from jurybox.suites._errors import Problem, SuiteError
from jurybox.suites._experiment_spec import MAX_TRIALS
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
from jurybox.suites._seed import Seed
from jurybox.suites._spec import (
    CASE_KEY_ALIASES,
    MAX_CONCURRENCY,
    MAX_RETRIES,
    MAX_TIMEOUT,
    SqlCheck,
    SqlExpect,
    case_as_ours,
    expected_tools_as_ours,
    stored_case,
)
from jurybox.suites._trials import TRIAL_MARK, Trial, trial_config, trial_name
from jurybox.suites._variants import VARIANT_MARK, Variant, variant_suite_name

if TYPE_CHECKING:
    from jurybox.suites._seed_schema import SPECTOR as SPECTOR_SEED_SCHEMA
    from jurybox.suites._seed_schema import FieldRule, SeedSchema
    from jurybox.suites._seeds import load_seed, load_seeds, parse_seed

_LAZY = {
    "SPECTOR_SEED_SCHEMA": ("jurybox.suites._seed_schema", "SPECTOR"),
    "FieldRule": ("jurybox.suites._seed_schema", "FieldRule"),
    "SeedSchema": ("jurybox.suites._seed_schema", "SeedSchema"),
    "load_seed": ("jurybox.suites._seeds", "load_seed"),
    "load_seeds": ("jurybox.suites._seeds", "load_seeds"),
    "parse_seed": ("jurybox.suites._seeds", "parse_seed"),
}

__all__ = [
    "CASE_KEY_ALIASES",
    "HOW_TO_ENABLE",
    "MAX_CONCURRENCY",
    "MAX_RETRIES",
    "MAX_TIMEOUT",
    "MAX_TRIALS",
    "SPECTOR_SEED_SCHEMA",
    "TIERS",
    "TIER_DETERMINISTIC",
    "TIER_LLM",
    "TIER_SIMILARITY",
    "TRIAL_MARK",
    "VARIANT_MARK",
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
    "Trial",
    "Variant",
    "case_as_ours",
    "case_specs",
    "expected_tools_as_ours",
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
    "stored_case",
    "suite_schema",
    "tier_of",
    "trial_config",
    "trial_name",
    "variant_suite_name",
]


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


def __getattr__(name: str) -> Any:
    where = _LAZY.get(name)
    if where is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(where[0]), where[1])
    globals()[name] = value
    return value
