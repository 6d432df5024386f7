"""Assertions for LLM output in tests: ``expect(...)`` chains and pass-rate checks.

    from jurybox.testing import expect, assert_pass_rate

See docs/pytest.md.
"""

from jurybox.testing._errors import JudgeNotConfiguredError, JuryboxAssertionError, JuryboxWarning
from jurybox.testing._expect import Expect, Expectation, expect
from jurybox.testing._scope import TestScope, current_scope
from jurybox.testing._stats import Decision, StoppingRule, wilson_interval
from jurybox.testing._trials import TrialsResult, assert_pass_rate, run_trials
from jurybox.testing._verdict import Verdict

__all__ = [
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
    "assert_pass_rate",
    "current_scope",
    "expect",
    "run_trials",
    "wilson_interval",
]
