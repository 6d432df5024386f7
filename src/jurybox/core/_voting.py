"""Voting strategies: how a jury turns its members' judgments into one verdict.

Every strategy sees only the members that decided (PASS or FAIL); the jury
applies its error policy before voting. An abstention is never a vote for
pass, so a jury whose members cannot decide cannot pass by default.
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal, Protocol

from jurybox.core._judgment import Judgment, Status

TiePolicy = Literal["pass", "fail", "abstain"]


@dataclass(frozen=True)
class Vote:
    """The outcome of a vote: a status, a 0..1 score and a sentence on why."""

    status: Status
    score: float | None
    reasoning: str


class Voting(Protocol):
    """A strategy that decides from named, decided judgments."""

    def decide(self, votes: Sequence[tuple[str, Judgment]], undecided: Sequence[str]) -> Vote: ...

    def check_names(self, names: Sequence[str]) -> None:
        """Raise ValueError when the strategy names a judge the jury does not have."""
        ...


def vote_value(judgment: Judgment) -> float:
    """A member's score for averaging: its normalized score, else 1 for PASS and 0 for FAIL."""
    value = judgment.value
    if value is not None:
        return value
    return 1.0 if judgment.status is Status.PASS else 0.0


def _check_threshold(name: str, threshold: float) -> None:
    if not 0.0 <= threshold <= 1.0:
        raise ValueError(f"{name}(threshold=...) must be in 0..1, got {threshold!r}")


def _no_votes(undecided: Sequence[str]) -> Vote:
    return Vote(Status.ABSTAIN, None, f"no member decided ({', '.join(undecided) or 'no members'})")


class _NamesFree:
    def check_names(self, names: Sequence[str]) -> None:
        return None


@dataclass(frozen=True)
class Majority(_NamesFree):
    """Pass when more members pass than fail.

    Args:
        tie: What an even split means: ``"abstain"`` (default: a tie is no
            verdict), ``"fail"`` or ``"pass"``.
    """

    tie: TiePolicy = "abstain"

    def __post_init__(self) -> None:
        if self.tie not in ("pass", "fail", "abstain"):
            raise ValueError(f"Majority(tie=...) must be 'pass', 'fail' or 'abstain', got {self.tie!r}")

    def decide(self, votes: Sequence[tuple[str, Judgment]], undecided: Sequence[str]) -> Vote:
        if not votes:
            return _no_votes(undecided)
        passes = sum(1 for _, j in votes if j.status is Status.PASS)
        fails = len(votes) - passes
        share = passes / len(votes)
        tally = f"{passes} pass, {fails} fail"
        if passes > fails:
            return Vote(Status.PASS, share, f"majority passes ({tally})")
        if fails > passes:
            return Vote(Status.FAIL, share, f"majority fails ({tally})")
        status = {"pass": Status.PASS, "fail": Status.FAIL, "abstain": Status.ABSTAIN}[self.tie]
        return Vote(status, share, f"tie ({tally}); tie policy says {self.tie}")


@dataclass(frozen=True)
class Average(_NamesFree):
    """Pass when the mean of the members' 0..1 scores reaches ``threshold``."""

    threshold: float = 0.5

    def __post_init__(self) -> None:
        _check_threshold("Average", self.threshold)

    def decide(self, votes: Sequence[tuple[str, Judgment]], undecided: Sequence[str]) -> Vote:
        if not votes:
            return _no_votes(undecided)
        mean = statistics.fmean(vote_value(j) for _, j in votes)
        return _threshold_vote("mean", mean, self.threshold)


@dataclass(frozen=True)
class Median(_NamesFree):
    """Pass when the median of the members' 0..1 scores reaches ``threshold`` (robust to one outlier judge)."""

    threshold: float = 0.5

    def __post_init__(self) -> None:
        _check_threshold("Median", self.threshold)

    def decide(self, votes: Sequence[tuple[str, Judgment]], undecided: Sequence[str]) -> Vote:
        if not votes:
            return _no_votes(undecided)
        middle = statistics.median(vote_value(j) for _, j in votes)
        return _threshold_vote("median", middle, self.threshold)


@dataclass(frozen=True)
class Weighted:
    """Pass when the weighted mean of the members' scores reaches ``threshold``.

    Args:
        weights: Weight per judge name. Members not listed weigh 1. A name that
            is not a member of the jury is an error when the jury is built.
        threshold: Pass mark for the weighted mean, 0..1.
    """

    weights: Mapping[str, float] = field(default_factory=dict)
    threshold: float = 0.5

    def __post_init__(self) -> None:
        _check_threshold("Weighted", self.threshold)
        for name, weight in self.weights.items():
            if isinstance(weight, bool) or not isinstance(weight, int | float) or weight < 0:
                raise ValueError(f"weight for {name!r} must be a non-negative number, got {weight!r}")

    def check_names(self, names: Sequence[str]) -> None:
        unknown = sorted(set(self.weights) - set(names))
        if unknown:
            raise ValueError(
                f"Weighted has weights for judge(s) not in the jury: {', '.join(unknown)}; "
                f"the jury's judges are: {', '.join(names)}"
            )

    def decide(self, votes: Sequence[tuple[str, Judgment]], undecided: Sequence[str]) -> Vote:
        if not votes:
            return _no_votes(undecided)
        total = sum(self.weights.get(name, 1.0) for name, _ in votes)
        if total == 0:
            return Vote(Status.ABSTAIN, None, "every deciding member has weight 0")
        mean = sum(self.weights.get(name, 1.0) * vote_value(j) for name, j in votes) / total
        return _threshold_vote("weighted mean", mean, self.threshold)


@dataclass(frozen=True)
class Consensus(_NamesFree):
    """Pass only when every member passes. A member that abstained blocks a pass (the jury abstains)."""

    def decide(self, votes: Sequence[tuple[str, Judgment]], undecided: Sequence[str]) -> Vote:
        failing = [name for name, j in votes if j.status is Status.FAIL]
        share = (len(votes) - len(failing)) / len(votes) if votes else None
        if failing:
            return Vote(Status.FAIL, share, f"not unanimous: {', '.join(failing)} failed")
        if undecided or not votes:
            return Vote(Status.ABSTAIN, share, f"no consensus: {', '.join(undecided) or 'no members'} did not decide")
        return Vote(Status.PASS, 1.0, f"all {len(votes)} passed")


@dataclass(frozen=True)
class AtLeast(_NamesFree):
    """Pass when at least ``k`` members pass; fail once ``k`` passes can no longer be reached."""

    k: int

    def __post_init__(self) -> None:
        if isinstance(self.k, bool) or not isinstance(self.k, int) or self.k < 1:
            raise ValueError(f"AtLeast(k) needs a whole number k >= 1, got {self.k!r}")

    def check_names(self, names: Sequence[str]) -> None:
        if self.k > len(names):
            raise ValueError(f"AtLeast({self.k}) can never pass: the jury has only {len(names)} judge(s)")

    def decide(self, votes: Sequence[tuple[str, Judgment]], undecided: Sequence[str]) -> Vote:
        passes = sum(1 for _, j in votes if j.status is Status.PASS)
        share = passes / len(votes) if votes else None
        if passes >= self.k:
            return Vote(Status.PASS, share, f"{passes} passed, at least {self.k} needed")
        if passes + len(undecided) < self.k:
            return Vote(Status.FAIL, share, f"only {passes} passed, at least {self.k} needed")
        return Vote(Status.ABSTAIN, share, f"{passes} passed, {len(undecided)} undecided; {self.k} needed")


def _threshold_vote(what: str, value: float, threshold: float) -> Vote:
    if value >= threshold:
        return Vote(Status.PASS, value, f"{what} {value:.3g} >= threshold {threshold:g}")
    return Vote(Status.FAIL, value, f"{what} {value:.3g} < threshold {threshold:g}")
