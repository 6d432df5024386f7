"""A run's judges against their stored calibrations: observed and corrected pass rates, for every report.

The CLI works these out after a run (it may read the store, the suite and the
calibrate package; a report may not) and hands them to ``RunReport.calibrations``;
the renderers only show them. Plain data with ``to_dict`` / ``from_dict``, so the
same notes go into the JSON report and into the run's stored config.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

CalibrationStatus = Literal["corrected", "too_weak", "uncorrectable", "undecided", "uncalibrated"]
"""What a report can say of a judge with a stored calibration.

``corrected``: a corrected estimate with its interval. ``too_weak``: TPR + TNR <= 1,
no correction exists. ``uncorrectable``: its calibration has no TPR and TNR from
both human-pass and human-fail rows. ``undecided``: it decided no case in this run.
``uncalibrated``: a calibration exists under its name, but its prompt, model or
settings changed since.
"""
CALIBRATION_STATUSES: tuple[str, ...] = ("corrected", "too_weak", "uncorrectable", "undecided", "uncalibrated")


@dataclass(frozen=True)
class CalibratedJudge:
    """One LLM judge of a run, next to its calibration.

    Attributes:
        judge: The judge's name.
        key: Its identity key in this run (what calibrations are filed under).
        status: See ``CalibrationStatus``.
        passed: Its PASS verdicts in this run.
        decided: Its PASS and FAIL verdicts in this run (ABSTAIN and ERROR are not decided).
        corrected: The Rogan-Gladen estimate, when ``status`` is ``corrected``.
        low: Lower end of its interval.
        high: Upper end of its interval.
        tpr: The calibration's TPR, when it has one.
        tnr: The calibration's TNR, when it has one.
        calibration_id: The stored calibration it was read from (the latest under its key, or its name).
        calibrated_at: When that calibration was stored.
        dataset: The labelled set it was measured on.
    """

    judge: str
    key: str
    status: CalibrationStatus
    passed: int = 0
    decided: int = 0
    corrected: float | None = None
    low: float | None = None
    high: float | None = None
    tpr: float | None = None
    tnr: float | None = None
    calibration_id: int | None = None
    calibrated_at: datetime | None = None
    dataset: str | None = None

    def __post_init__(self) -> None:
        if self.status not in CALIBRATION_STATUSES:
            raise ValueError(f"CalibratedJudge.status must be one of {', '.join(CALIBRATION_STATUSES)}")

    @property
    def observed(self) -> float | None:
        """PASS / decided in this run, or None when it decided nothing."""
        return self.passed / self.decided if self.decided else None

    def describe(self) -> str:
        """The one line every report shows for this judge (plain text; each renderer escapes it)."""
        on = self.calibrated_at.date().isoformat() if self.calibrated_at else "an unknown date"
        if self.status == "uncalibrated":
            return f"{self.judge}: uncalibrated: its prompt or model changed since its calibration on {on}"
        if self.status == "undecided":
            return f"{self.judge}: decided no case in this run; nothing to correct (calibrated on {on})"
        observed = f"{self.judge}: observed {_rate(self.observed)} ({self.passed}/{self.decided})"
        rates = f"TPR {_number(self.tpr)}, TNR {_number(self.tnr)}"
        source = f"calibrated on {on} with {self.dataset or 'an unnamed set'}"
        if self.status == "too_weak":
            return f"{observed}; too weak for a correction: {rates} (TPR + TNR <= 1); {source}"
        if self.status == "uncorrectable":
            return f"{observed}; no correction: its calibration has no TPR and TNR from pass and fail labels; {source}"
        interval = f"[{_rate(self.low)}, {_rate(self.high)}]"
        return f"{observed}, corrected {_rate(self.corrected)} {interval} ({rates}; {source})"

    def to_dict(self) -> dict[str, Any]:
        return {
            "judge": self.judge,
            "key": self.key,
            "status": self.status,
            "passed": self.passed,
            "decided": self.decided,
            "observed": self.observed,
            "corrected": self.corrected,
            "low": self.low,
            "high": self.high,
            "tpr": self.tpr,
            "tnr": self.tnr,
            "calibration_id": self.calibration_id,
            "calibrated_at": self.calibrated_at.isoformat() if self.calibrated_at else None,
            "dataset": self.dataset,
            "text": self.describe(),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> CalibratedJudge:
        """Read ``to_dict``'s output back (derived fields, ``observed`` and ``text``, are recomputed).

        Raises:
            ValueError: a missing field or an unknown status.
            TypeError: a field of the wrong type.
        """
        try:
            when = data.get("calibrated_at")
            return cls(
                judge=str(data["judge"]),
                key=str(data["key"]),
                status=data["status"],
                passed=int(data.get("passed") or 0),
                decided=int(data.get("decided") or 0),
                corrected=data.get("corrected"),
                low=data.get("low"),
                high=data.get("high"),
                tpr=data.get("tpr"),
                tnr=data.get("tnr"),
                calibration_id=data.get("calibration_id"),
                calibrated_at=datetime.fromisoformat(when) if isinstance(when, str) else None,
                dataset=data.get("dataset"),
            )
        except KeyError as exc:
            raise ValueError(f"a calibrated judge needs {exc.args[0]!r}") from None


# The formats of _format's rate and scores: _format imports _model, which imports this module.
def _rate(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.1%}"


def _number(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.2f}"
