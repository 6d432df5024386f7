"""Spector's camelCase names for ``expect`` steps, with Spector's defaults.

Spector's ``hasGoodRanking`` and ``coversTopics`` warn by default: a poor ranking or a
missing topic is reported in the test summary and the test goes on (``strict`` mode, or
``LLM_JUDGE_FAIL_ON_REJECT=1``, makes them fail). jurybox's own ``has_good_ranking`` and
``covers_topics`` stay hard. ``hard=True`` gives Spector's names the hard behaviour.
``isRelevantTo`` is hard and ``warnIfIrrelevant`` soft, as their snake_case twins.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from jurybox.testing._expect import Expectation


class _Steps(Protocol):
    def _relevance(self, step: str, criteria: str, soft: bool, options: dict[str, Any]) -> Expectation: ...

    def _ranking(self, step: str, criteria: str | None, soft: bool, options: dict[str, Any]) -> Expectation: ...

    def _coverage(self, step: str, topics: tuple[str, ...], soft: bool, options: dict[str, Any]) -> Expectation: ...


class SeedStepNames:
    """Mixed into ``Expectation``: the camelCase steps Spector's tests call."""

    def hasGoodRanking(  # noqa: N802 - Spector's name, kept as written so its tests run unchanged
        self: _Steps, criteria: str | None = None, *, hard: bool = False, **options: Any
    ) -> Expectation:
        """Spector's ranking check: warns by default (``warn_if_poorly_ranked``); ``hard=True`` fails instead."""
        __tracebackhide__ = True
        return self._ranking("hasGoodRanking", criteria, not hard, options)

    def coversTopics(  # noqa: N802 - Spector's name
        self: _Steps, *topics: str, hard: bool = False, **options: Any
    ) -> Expectation:
        """Spector's coverage check: warns by default (``warn_if_missing_topics``); ``hard=True`` fails instead."""
        __tracebackhide__ = True
        return self._coverage("coversTopics", topics, not hard, options)

    def isRelevantTo(self: _Steps, criteria: str, **options: Any) -> Expectation:  # noqa: N802 - Spector's name
        """Spector's relevance check, hard like ``is_relevant_to``."""
        __tracebackhide__ = True
        return self._relevance("isRelevantTo", criteria, False, options)

    def warnIfIrrelevant(self: _Steps, criteria: str, **options: Any) -> Expectation:  # noqa: N802 - Spector's name
        """Spector's soft relevance check, like ``warn_if_irrelevant``: a warning, and the test goes on."""
        __tracebackhide__ = True
        return self._relevance("warnIfIrrelevant", criteria, True, options)
