"""One case under one variant: its record, or its trials grouped back into it, with a status by the declared rule.

A case run with ``trials:`` is stored as one record per trial (``case~k``). Here
they become one outcome again: how many trials passed, failed, errored or
abstained; the pass probability with a Wilson interval over the decided trials;
and the case's status by its rule (``all``, ``majority``, at least k). A rule the
undecided trials could still tip either way leaves the case undecided (ERROR or
ABSTAIN), never a pass or a fail.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from jurybox.core import CaseRecord, Status
from jurybox.stats import CaseSide, wilson_interval

TRIAL_MARK = "~"
"""Between a case's name and its trial's number in the store (``jurybox.suites.TRIAL_MARK``)."""


@dataclass(frozen=True)
class CaseOutcome:
    """One case as one variant did it.

    Attributes:
        case: The case's name (a repeated case's own name, not its trials').
        status: PASS or FAIL by the rule; ERROR or ABSTAIN when it cannot be told.
        passed: Trials that passed (0 or 1 for a case that runs once).
        failed: Trials that failed.
        errored: Trials that errored.
        abstained: Trials whose judges could not decide.
        count: Trials planned (1 for a case that runs once).
        rule: ``all``, ``majority`` or at least k; None for a case that runs once.
        score: The mean score of its decided trials; None when none has one.
        cost: What its trials cost, summed; None when none reported a cost.
        duration: Seconds its trials took, summed.
        reply: The agent's last reply (of the first trial), for side-by-side views.
        reasoning: Why the verdict is what it is (of the first trial not passed, else the first).
    """

    case: str
    status: Status
    passed: int
    failed: int
    errored: int
    abstained: int
    count: int = 1
    rule: str | int | None = None
    score: float | None = None
    cost: float | None = None
    duration: float = 0.0
    reply: str = ""
    reasoning: str = ""

    @property
    def decided(self) -> int:
        return self.passed + self.failed

    @property
    def interval(self) -> tuple[float, float]:
        """The pass probability's 95% Wilson interval over the decided trials."""
        return wilson_interval(self.passed, self.decided)

    @property
    def pass_probability(self) -> float | None:
        return self.passed / self.decided if self.decided else None

    def side(self) -> CaseSide:
        """The case for ``jurybox.stats.compare_runs``: undecided cases are left out of its tests."""
        passed = None if not self.status.decided else self.status is Status.PASS
        trials = (self.passed, self.decided) if self.rule is not None and self.decided else None
        return CaseSide(passed=passed, score=self.score, trials=trials)

    def to_dict(self) -> dict[str, Any]:
        low, high = self.interval
        return {
            "case": self.case,
            "status": self.status.value,
            "passed": self.passed,
            "failed": self.failed,
            "errored": self.errored,
            "abstained": self.abstained,
            "trials": self.count,
            "rule": self.rule,
            "pass_probability": self.pass_probability,
            "interval": {"low": low, "high": high, "confidence": 0.95, "method": "wilson"} if self.rule else None,
            "score": self.score,
            "cost": self.cost,
            "duration": self.duration,
        }


def needed(rule: str | int, count: int) -> int:
    """Trials that must pass for the case to pass."""
    if rule == "all":
        return count
    if rule == "majority":
        return count // 2 + 1
    return int(rule)


def rule_status(passed: int, failed: int, errored: int, abstained: int, count: int, rule: str | int) -> Status:
    """The case's status by its rule; undecided while the open trials (undecided or missing) could tip it."""
    need = needed(rule, count)
    still_open = count - passed - failed
    if passed >= need:
        return Status.PASS
    if passed + still_open < need:
        return Status.FAIL
    return Status.ERROR if errored or not abstained else Status.ABSTAIN


def outcomes(records: Iterable[CaseRecord], rules: Mapping[str, Mapping[str, Any]]) -> dict[str, CaseOutcome]:
    """Each case's outcome from a run's records, trials grouped by the run's rules (config ``trials``)."""
    groups: dict[str, list[CaseRecord]] = {}
    for record in records:
        base, mark, number = record.case.rpartition(TRIAL_MARK)
        key = base if mark and number.isdigit() and base in rules else record.case
        groups.setdefault(key, []).append(record)
    return {name: _outcome(name, found, rules.get(name)) for name, found in groups.items()}


def _outcome(name: str, records: list[CaseRecord], rule: Mapping[str, Any] | None) -> CaseOutcome:
    counts = {status: sum(1 for r in records if r.status is status) for status in Status}
    passed, failed = counts[Status.PASS], counts[Status.FAIL]
    errored, abstained = counts[Status.ERROR], counts[Status.ABSTAIN]
    scores = [r.score for r in records if r.status.decided and r.score is not None]
    costs = [r.cost for r in records if r.cost is not None]
    first = records[0]
    shown = next((r for r in records if r.status is not Status.PASS), first)
    count, kind, status = 1, None, first.status
    if rule is not None:
        count = int(rule.get("count", len(records)))
        kind = rule.get("pass", "all")
        status = rule_status(passed, failed, errored, abstained, count, kind)
    return CaseOutcome(
        name,
        status,
        passed,
        failed,
        errored,
        abstained,
        count=count,
        rule=kind,
        score=sum(scores) / len(scores) if scores else None,
        cost=sum(costs) if costs else None,
        duration=sum(r.duration for r in records),
        reply=first.context.output if first.context is not None else "",
        reasoning=shown.error or shown.judgment.reasoning or "",
    )
