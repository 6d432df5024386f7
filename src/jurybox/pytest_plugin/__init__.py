"""The jurybox pytest plugin (entry point ``pytest11: jurybox``).

Options ``--jurybox-model``, ``--jurybox-strict``, ``--jurybox-live`` and
``--record-mode``; markers ``llm_judge``, ``live_llm``, ``similarity_threshold``,
``cassette`` and ``trials``; fixtures ``judge_model``, ``fake_model``,
``jurybox_context``, ``jurybox_cassette`` and ``jurybox_scope``; a terminal
summary of soft warnings and trials; verdicts as JUnit XML properties.
See docs/pytest.md.
"""

import importlib.util

from jurybox.inputs import CassetteError
from jurybox.pytest_plugin._cassettes import NetworkBlockedError, NetworkGuard, cassette_path, use_cassette
from jurybox.pytest_plugin._config import CassetteSettings, ConfigError, JuryboxSettings, build_settings
from jurybox.pytest_plugin._judge_enabled import is_llm_judge_enabled
from jurybox.pytest_plugin._lint import cassette_files, lint_file
from jurybox.pytest_plugin._patterns import PATTERNS
from jurybox.pytest_plugin._redaction import Redactor
from jurybox.pytest_plugin._secrets import ALL_RULES, PLACEHOLDER, RuleSet, find_secrets, scrub_text

__all__ = [
    "ALL_RULES",
    "PATTERNS",
    "PLACEHOLDER",
    "CassetteError",
    "CassetteSettings",
    "ConfigError",
    "JuryboxSettings",
    "NetworkBlockedError",
    "NetworkGuard",
    "Redactor",
    "RuleSet",
    "build_settings",
    "cassette_files",
    "cassette_path",
    "find_secrets",
    "is_llm_judge_enabled",
    "lint_file",
    "scrub_text",
    "use_cassette",
]

# The hooks and fixtures need pytest; the cassette, redaction and lint parts above do not,
# and ``jurybox lint-cassettes`` (so the whole ``jurybox`` command, which registers it) must
# work where pytest is not installed. Under pytest, which is what loads this module as a
# plugin, the hooks are always here.
if importlib.util.find_spec("pytest") is not None:
    from jurybox.pytest_plugin._plugin import (
        fake_model,
        judge_model,
        jurybox_cassette,
        jurybox_context,
        jurybox_scope,
        pytest_addoption,
        pytest_configure,
        pytest_pyfunc_call,
        pytest_report_header,
        pytest_runtest_makereport,
        pytest_runtest_setup,
        pytest_terminal_summary,
        pytest_unconfigure,
    )

    __all__ += [
        "fake_model",
        "judge_model",
        "jurybox_cassette",
        "jurybox_context",
        "jurybox_scope",
        "pytest_addoption",
        "pytest_configure",
        "pytest_pyfunc_call",
        "pytest_report_header",
        "pytest_runtest_makereport",
        "pytest_runtest_setup",
        "pytest_terminal_summary",
        "pytest_unconfigure",
    ]
    # pytest-recording's fixture name, when pytest-recording does not provide it itself.
    from jurybox.pytest_plugin import _plugin

    if hasattr(_plugin, "vcr_cassette"):
        vcr_cassette = _plugin.vcr_cassette
        __all__ += ["vcr_cassette"]
