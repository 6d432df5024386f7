"""The judge registry as the suites see it: ``jurybox.core``'s, with the built-in judges in it.

Every built-in judge factory registers itself (``@judge_factory``) when its
package is imported; importing ``jurybox.judges`` and ``jurybox.llm`` here is what
puts them in ``JudgeRegistry.default()`` before any suite file is read.
"""

from __future__ import annotations

from jurybox import judges as _judges  # noqa: F401  (imported for its @judge_factory registrations)
from jurybox import llm as _llm  # noqa: F401  (imported for its @judge_factory registrations)
from jurybox.core import (
    TIER_DETERMINISTIC,
    TIER_LLM,
    TIER_LLM_OPERATIONS,
    TIER_SIMILARITY,
    TIERS,
    JudgeFactory,
    JudgeRegistry,
    tier_of,
)

__all__ = [
    "TIERS",
    "TIER_DETERMINISTIC",
    "TIER_LLM",
    "TIER_LLM_OPERATIONS",
    "TIER_SIMILARITY",
    "JudgeFactory",
    "JudgeRegistry",
    "tier_of",
]
