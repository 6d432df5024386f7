"""Where ``expect`` finds its settings and sends its verdicts: the running pytest test, or defaults.

The pytest plugin opens a scope around each test: the judge model, the
confidence threshold, strict mode, the similarity default and the test's
``user_properties`` (which pytest writes to JUnit XML and carries to the
terminal summary, also across xdist workers). Outside pytest there is no scope
and ``expect`` falls back to the environment.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from jurybox.testing._verdict import Verdict

if TYPE_CHECKING:
    from jurybox.testing._trials import TrialsResult

VERDICT_PROPERTY = "jurybox.verdict"
WARNING_PROPERTY = "jurybox.warning"
TRIALS_PROPERTY = "jurybox.trials"

DEFAULT_CONFIDENCE = 0.6
DEFAULT_SIMILARITY = 0.85

HOW_TO_CONFIGURE = (
    "configure a judge model with --jurybox-model openai:gpt-4o-mini, the JURYBOX_JUDGE_MODEL "
    'environment variable or `model = "..."` under [tool.jurybox] in pyproject.toml, '
    "or pass expect(..., judge_model=...)"
)


@dataclass
class TestScope:
    """Settings and sinks of one running test.

    Attributes:
        judge_model: A judge model set for this test only (the ``fake_model`` fixture sets it).
        model_factory: Builds (once, for the session) the configured judge model, or None
            when no model is configured.
        confidence: Confidence threshold; verdicts under it are uncertain.
        strict: Soft steps fail like hard ones (``--jurybox-strict``).
        similarity_threshold: Default for ``is_similar_to``.
        properties: The test's ``user_properties`` list.
    """

    __test__ = False  # not a pytest test class, despite the name

    judge_model: Any = None
    model_factory: Callable[[], Any] | None = None
    confidence: float = DEFAULT_CONFIDENCE
    strict: bool = False
    similarity_threshold: float = DEFAULT_SIMILARITY
    properties: list[tuple[str, object]] = field(default_factory=list)

    def configured_model(self) -> Any:
        """This test's judge model: the per-test one, else the session's, else None."""
        if self.judge_model is not None:
            return self.judge_model
        return self.model_factory() if self.model_factory is not None else None

    def record_verdict(self, verdict: Verdict) -> None:
        self.properties.append((VERDICT_PROPERTY, verdict.to_json()))
        if verdict.soft and not verdict.ok:
            self.properties.append((WARNING_PROPERTY, verdict.to_json()))

    def record_trials(self, name: str, result: TrialsResult) -> None:
        payload = {"name": name, **result.to_dict()}
        self.properties.append((TRIALS_PROPERTY, json.dumps(payload, sort_keys=True)))


_active: list[TestScope] = []


def current_scope() -> TestScope | None:
    """The innermost open scope, or None outside a jurybox-enabled pytest test."""
    return _active[-1] if _active else None


@contextmanager
def test_scope(scope: TestScope) -> Iterator[TestScope]:
    """Make ``scope`` current for the duration of the block."""
    _active.append(scope)
    try:
        yield scope
    finally:
        _active.remove(scope)


test_scope.__test__ = False  # type: ignore[attr-defined]


def fallback_strict() -> bool:
    """Strict mode outside pytest: ``JURYBOX_FAIL_ON_REJECT`` set to a true word."""
    return os.environ.get("JURYBOX_FAIL_ON_REJECT", "").strip().lower() in {"1", "true", "yes", "on"}
