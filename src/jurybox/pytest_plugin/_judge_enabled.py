"""``is_llm_judge_enabled()``: whether a test's semantic checks have a judge model to ask.

Spector's tests ask this before an LLM-judged step (``if (isLLMJudgeEnabled()) ...``);
here it answers from the same settings the plugin uses, so a test skips its judged
part exactly when ``expect(...)`` would say no judge model is configured.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from jurybox.pytest_plugin._config import build_settings
from jurybox.testing import current_scope


def is_llm_judge_enabled(environ: Mapping[str, str] | None = None, *, pyproject: Path | None = None) -> bool:
    """True when a judge model is configured for ``expect``'s semantic steps.

    Inside a test run by the jurybox pytest plugin this is the session's setting (the
    command line, ``JURYBOX_JUDGE_MODEL``, ``[tool.jurybox] model``, or ``LLM_JUDGE=1``
    with ``LLM_JUDGE_MODEL``, default ``llama3.1``) or the test's own ``fake_model``.
    Elsewhere the same settings are read from ``environ`` (default: the process
    environment) and ``pyproject`` (default: ``pyproject.toml`` in the current folder).
    ``LLM_JUDGE_MODEL`` alone does not turn judging on: ``LLM_JUDGE=1`` does.

    Raises:
        jurybox.pytest_plugin.ConfigError: a setting that cannot be read, naming it.
    """
    scope = current_scope()
    if scope is not None and environ is None:
        return scope.judge_model is not None or scope.model_factory is not None
    if pyproject is None and Path("pyproject.toml").is_file():
        pyproject = Path("pyproject.toml")
    settings = build_settings(pyproject=pyproject, environ=os.environ if environ is None else environ)
    return settings.model is not None
