"""Assertions for LLM output in tests: ``expect(...)`` chains and pass-rate checks.

    from jurybox.testing import expect, assert_pass_rate

See docs/pytest.md.
"""

from jurybox.stats import wilson_interval
from jurybox.testing._errors import JudgeNotConfiguredError, JuryboxAssertionError, JuryboxWarning
from jurybox.testing._expect import Expect, Expectation, expect
from jurybox.testing._scope import (
    HOW_TO_CONFIGURE,
    TRIALS_PROPERTY,
    VERDICT_PROPERTY,
    WARNING_PROPERTY,
    TestScope,
    current_scope,
    test_scope,
)
from jurybox.testing._similar import assert_llm_output_similar
from jurybox.testing._stats import Decision, StoppingRule
from jurybox.testing._trials import TrialsResult, assert_pass_rate, failure_message, report_trials, run_trials
from jurybox.testing._verdict import Verdict

__all__ = [
    "HOW_TO_CONFIGURE",
    "TRIALS_PROPERTY",
    "VERDICT_PROPERTY",
    "WARNING_PROPERTY",
    "Decision",
    "Expect",
    "Expectation",
    "JudgeNotConfiguredError",
    "JuryboxAssertionError",
    "JuryboxWarning",
    "StoppingRule",
    "TestScope",
    "TrialsResult",
    "Verdict",
    "assert_llm_output_similar",
    "assert_pass_rate",
    "current_scope",
    "expect",
    "failure_message",
    "report_trials",
    "run_trials",
    "test_scope",
    "wilson_interval",
]
