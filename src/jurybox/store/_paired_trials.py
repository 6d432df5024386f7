"""A run's repeated cases read as one case each: trials ``case~1`` ... ``case~N`` grouped back by their rule.

A suite's ``trials:`` stores each trial as a case of its own (so resume judges each
exactly once) and keeps each repeated case's rule in the run's config (``trials``:
``{case: {"count": N, "pass": "all" | "majority" | k}}``). Paired statistics must pair
cases, not trials: trials of one case are not independent pairs. So each repeated case
becomes one ``CaseSide`` whose outcome follows the rule and which carries its
``(passes, decided trials)`` for the tests on per-case pass rates.
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping
from typing import Any

from jurybox.stats import CaseSide

TRIAL_MARK = "~"
"""Between a case's name and its trial's number (``refund~3``), as the suite loader names trials."""


def rule_outcome(rule: Any, count: int, passes: int, fails: int) -> bool | None:
    """The case's outcome under its rule; None while undecided trials could still tip it either way."""
    undecided = max(0, count - passes - fails)
    if rule == "all":
        return False if fails else (True if not undecided else None)
    need = count // 2 + 1 if rule == "majority" else int(rule) if isinstance(rule, int) else count
    if passes >= need:
        return True
    if passes + undecided < need:
        return False
    return None


def group_trials(sides: Mapping[str, CaseSide], rules: Mapping[str, Any]) -> dict[str, CaseSide]:
    """``sides`` with every repeated case's trials replaced by one side for the case."""
    if not rules:
        return dict(sides)
    grouped: dict[str, list[CaseSide]] = {}
    kept: dict[str, CaseSide] = {}
    for name, side in sides.items():
        case, mark, index = name.rpartition(TRIAL_MARK)
        if mark and index.isdigit() and case in rules:
            grouped.setdefault(case, []).append(side)
        else:
            kept[name] = side
    for case, trials in grouped.items():
        rule = rules[case]
        spec = rule if isinstance(rule, Mapping) else {}
        declared = spec.get("count")
        count = declared if isinstance(declared, int) else len(trials)
        passes = sum(1 for t in trials if t.passed is True)
        fails = sum(1 for t in trials if t.passed is False)
        scores = [t.score for t in trials if t.score is not None]
        kept[case] = CaseSide(
            rule_outcome(spec.get("pass", "all"), max(count, len(trials)), passes, fails),
            statistics.fmean(scores) if scores else None,
            _mean_of(t.tiers for t in trials),
            _mean_of(t.judges for t in trials),
            (passes, passes + fails) if passes + fails else None,
        )
    return kept


def _mean_of(maps: Any) -> dict[str, float]:
    values: dict[str, list[float]] = {}
    for found in maps:
        for key, value in found.items():
            values.setdefault(key, []).append(value)
    return {key: statistics.fmean(found) for key, found in values.items()}
