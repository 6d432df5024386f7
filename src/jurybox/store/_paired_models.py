"""What a paired comparison of two stored runs hands back, and the judge-corrected differences in it.

A run records its LLM judges' identities in its config (``judge_identities``: the
judgment's path -> kind, model, prompt hash, settings, and the identity's key).
Where both runs ran the same judge at a path (same key) and a calibration is
stored under that key, the judge's own verdicts are compared pair by pair with
its error taken out (``jurybox.stats.corrected_difference``: both the cases and
the calibration's labelled rows are resampled, so the interval is wider).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from jurybox.stats import CaseSide, CorrectedDifference, JudgeCalibration, PairedComparison, corrected_difference
from jurybox.store._models import RunInfo
from jurybox.store._reviews import JUDGE_IDENTITIES_KEY

if TYPE_CHECKING:
    from jurybox.store._calibrations import CalibrationRepository


@dataclass(frozen=True)
class JudgeCorrection:
    """One calibrated judge's verdicts in both runs, corrected for its measured error.

    Attributes:
        path: The judgment's path (``llm_judge/correctness``).
        judge: The judge's name when calibrated.
        calibration_id: The stored calibration used.
        calibration: Its TPR, TNR and the labelled rows behind them.
        difference: Each run's corrected pass rate of this judge and B's minus A's, with its interval.
    """

    path: str
    judge: str
    calibration_id: int
    calibration: JudgeCalibration
    difference: CorrectedDifference

    def describe(self) -> str:
        d = self.difference
        if d.difference is None:
            return f"{self.path}: the judge is too weak to correct for (TPR + TNR <= 1)"
        span = "no interval (too weak in resamples)" if d.interval is None else _span(d.interval.low, d.interval.high)
        assert d.a is not None and d.b is not None
        return (
            f"{self.path}: corrected pass rate A {d.a:.1%}, B {d.b:.1%}: {d.difference * 100:+.1f} points {span} "
            f"(TPR {self.calibration.tpr:.2f}, TNR {self.calibration.tnr:.2f}, {d.pairs} pairs)"
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "judge": self.judge,
            "calibration_id": self.calibration_id,
            "tpr": self.calibration.tpr,
            "tnr": self.calibration.tnr,
            "positives": self.calibration.positives,
            "negatives": self.calibration.negatives,
            **self.difference.to_dict(),
            "summary": self.describe(),
        }


@dataclass(frozen=True)
class PairedRuns:
    """Run B against run A, case by case: the statistics, the undecided of each side, the corrected judges.

    Attributes:
        run_a: The earlier run.
        run_b: The later run.
        comparison: Pass-rate and mean differences over the decided pairs (``jurybox.stats``).
        undecided_a: A's ERROR and ABSTAIN counts (never a pass or a fail in a test).
        undecided_b: B's.
        corrected: Calibrated judges' corrected differences.
        adjusted_p: The pass-rate p-value Holm-adjusted over every pair compared at once (over two runs).
    """

    run_a: RunInfo
    run_b: RunInfo
    comparison: PairedComparison
    undecided_a: Mapping[str, int]
    undecided_b: Mapping[str, int]
    corrected: tuple[JudgeCorrection, ...] = ()
    adjusted_p: float | None = None

    @property
    def pairs(self) -> int:
        """Decided pairs the pass-rate figures rest on."""
        return self.comparison.pass_rate.pairs

    def with_adjusted(self, value: float | None) -> PairedRuns:
        return replace(self, adjusted_p=value)

    def describe(self, a: str = "A", b: str = "B") -> str:
        """The pass-rate finding in plain words (``B passes 8.0 points more than A [...]``)."""
        return self.comparison.pass_rate.describe(a, b)

    def to_dict(self) -> dict[str, Any]:
        found = self.comparison.to_dict()
        found["a"], found["b"] = self.run_a.id, self.run_b.id
        found["summary"] = self.comparison.pass_rate.describe("A", "B")
        found["pairs"] = self.pairs
        found["pass_rate"]["adjusted_p"] = self.adjusted_p
        found["undecided_counts"] = {"a": dict(self.undecided_a), "b": dict(self.undecided_b)}
        found["corrected"] = [c.to_dict() for c in self.corrected]
        return found


def corrections(
    calibrations: CalibrationRepository,
    run_a: RunInfo,
    run_b: RunInfo,
    sides_a: Mapping[str, CaseSide],
    sides_b: Mapping[str, CaseSide],
    *,
    resamples: int,
    seed: int,
) -> tuple[JudgeCorrection, ...]:
    """The corrected difference of each judge both runs ran with one identity and a stored calibration."""
    keys_a, keys_b = _identity_keys(run_a), _identity_keys(run_b)
    found = []
    for path in sorted(set(keys_a) & set(keys_b)):
        if keys_a[path] != keys_b[path]:
            continue  # a different prompt, model or settings: one calibration cannot speak for both
        stored = calibrations.latest(keys_a[path])
        if stored is None:
            continue
        tpr, tnr = stored.figure("tpr"), stored.figure("tnr")
        positives, negatives = stored.figure("positives"), stored.figure("negatives")
        if tpr is None or tnr is None or not positives or not negatives:
            continue
        try:
            calibration = JudgeCalibration(tpr, tnr, int(positives), int(negatives))
        except ValueError:
            continue  # figures a person edited into nonsense: no correction rather than a wrong one
        outcomes = [
            (side.verdicts[path], sides_b[name].verdicts[path])
            for name, side in sides_a.items()
            if path in side.verdicts and name in sides_b and path in sides_b[name].verdicts
        ]
        difference = corrected_difference(outcomes, calibration, resamples=resamples, seed=seed)
        found.append(JudgeCorrection(path, stored.name, stored.id, calibration, difference))
    return tuple(found)


def has_calibration(calibrations: CalibrationRepository, run_a: RunInfo, run_b: RunInfo) -> bool:
    """True when some judge both runs ran with one identity has a stored calibration (``corrections`` may apply)."""
    keys_a, keys_b = _identity_keys(run_a), _identity_keys(run_b)
    return any(
        keys_a[path] == keys_b[path] and calibrations.latest(keys_a[path]) is not None
        for path in set(keys_a) & set(keys_b)
    )


def _identity_keys(run: RunInfo) -> dict[str, str]:
    identities = run.config.get(JUDGE_IDENTITIES_KEY) if isinstance(run.config, Mapping) else None
    if not isinstance(identities, Mapping):
        return {}
    return {
        str(path): identity["key"]
        for path, identity in identities.items()
        if isinstance(identity, Mapping) and isinstance(identity.get("key"), str)
    }


def _span(low: float, high: float) -> str:
    return f"[{low * 100:+.1f}, {high * 100:+.1f}]"
