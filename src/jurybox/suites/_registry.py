"""Judges by name: what a suite file's ``- contains: {...}`` entries resolve to.

The registry maps a name to a factory and the cascade tier its judges run in.
Deterministic judges (``jurybox.judges``) run first, the offline embedding
similarity judge next, LLM judges (``jurybox.llm``) last, so a cheap failure
means no tokens are spent.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from jurybox import judges as deterministic
from jurybox import llm

TIER_DETERMINISTIC = "deterministic"
TIER_SIMILARITY = "similarity"
TIER_LLM = "llm_judge"
TIERS: tuple[str, ...] = (TIER_DETERMINISTIC, TIER_SIMILARITY, TIER_LLM)
"""Cascade tiers in the order they run; the store and reports use these names."""

DETERMINISTIC_FACTORIES: tuple[str, ...] = (
    "equals",
    "contains",
    "matches",
    "starts_with",
    "similar",
    "valid_json",
    "json_schema",
    "file_exists",
    "file_contains",
    "command",
    "same_python",
    "max_latency",
    "max_cost",
    "tool_calls",
)
LLM_FACTORIES: tuple[str, ...] = (
    "correctness",
    "relevance",
    "ranking",
    "coverage",
    "rubric",
    "faithfulness",
    "pairwise",
    "clarification",
)
SIMILARITY_FACTORIES: tuple[str, ...] = ("similarity",)

# A judge's ``kind`` attribute says which tier it belongs in when the registry does not.
_KIND_TIERS = {
    "deterministic": TIER_DETERMINISTIC,
    "similarity": TIER_SIMILARITY,
    "embedding": TIER_SIMILARITY,
    "llm": TIER_LLM,
    "llm_judge": TIER_LLM,
}


def tier_of(judge: Any, default: str = TIER_DETERMINISTIC) -> str:
    """The tier a judge object runs in, from its ``kind`` attribute (``default`` when it has none)."""
    kind = getattr(judge, "kind", None)
    return _KIND_TIERS.get(kind, default) if isinstance(kind, str) else default


def tier_rank(tier: str) -> int:
    return TIERS.index(tier)


@dataclass(frozen=True)
class JudgeFactory:
    """A named judge factory and the tier its judges run in."""

    name: str
    factory: Callable[..., Any]
    tier: str

    @cached_property
    def _signature(self) -> inspect.Signature | None:
        # Read once per factory, not once per case: a suite of 10,000 cases asks 20,000 times.
        try:
            return inspect.signature(self.factory)
        except (TypeError, ValueError):
            return None

    def parameters(self) -> list[str]:
        """The keyword options the factory accepts, for error messages."""
        if self._signature is None:
            return []
        return [
            p.name
            for p in self._signature.parameters.values()
            if p.kind not in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)
        ]

    def accepts(self, option: str) -> bool:
        signature = self._signature
        if signature is None:
            return False
        if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in signature.parameters.values()):
            return True
        return option in signature.parameters


class JudgeRegistry:
    """Name -> judge factory. ``JudgeRegistry.default()`` holds every built-in judge.

    Example:
        >>> registry = JudgeRegistry.default().copy()
        >>> registry.register("mentions_price", lambda: my_judge, tier="deterministic")
    """

    def __init__(self, factories: dict[str, JudgeFactory] | None = None) -> None:
        self._factories: dict[str, JudgeFactory] = dict(factories or {})

    @classmethod
    def default(cls) -> JudgeRegistry:
        """The built-in judges of ``jurybox.judges`` and ``jurybox.llm``."""
        registry = cls()
        for name in DETERMINISTIC_FACTORIES:
            registry.register(name, getattr(deterministic, name), tier=TIER_DETERMINISTIC)
        for name in LLM_FACTORIES:
            registry.register(name, getattr(llm, name), tier=TIER_LLM)
        for name in SIMILARITY_FACTORIES:
            registry.register(name, getattr(llm, name), tier=TIER_SIMILARITY)
        return registry

    def copy(self) -> JudgeRegistry:
        return JudgeRegistry(self._factories)

    def register(self, name: str, factory: Callable[..., Any], *, tier: str = TIER_DETERMINISTIC) -> None:
        """Add (or replace) a judge factory under ``name``."""
        if tier not in TIERS:
            raise ValueError(f"tier must be one of {', '.join(TIERS)}; got {tier!r}")
        if not callable(factory):
            raise TypeError(f"judge factory {name!r} is not callable: {factory!r}")
        self._factories[name] = JudgeFactory(name, factory, tier)

    def get(self, name: str) -> JudgeFactory | None:
        return self._factories.get(name)

    def names(self) -> list[str]:
        return sorted(self._factories)

    def __contains__(self, name: object) -> bool:
        return name in self._factories

    def __iter__(self) -> Iterator[JudgeFactory]:
        return iter(self._factories.values())
