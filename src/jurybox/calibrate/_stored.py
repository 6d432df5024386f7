"""What a stored calibration is listed and corrected by: a judge's headline figures as plain numbers.

A store keeps each judge's whole calibration as JSON, plus these few numbers so
a listing or a run's pass-rate correction reads them without decoding the rest.
"""

from __future__ import annotations

from typing import Any

from jurybox.calibrate._labels import FAIL, PASS
from jurybox.calibrate._result import CalibrationResult, JudgeCalibration

HEADLINE_FIGURES = ("accuracy", "tpr", "tnr", "kappa", "alpha", "spearman", "positional_agreement")
"""The figures kept as plain numbers, when the label kind has them."""


def calibration_figures(result: CalibrationResult, judge: JudgeCalibration) -> dict[str, Any]:
    """The headline numbers of one judge of ``result``.

    ``positives`` and ``negatives`` are the human-pass and human-fail rows behind
    TPR and TNR (what ``corrected_pass_rate`` needs); they are None for label
    kinds other than binary.
    """
    figures: dict[str, Any] = {
        "kind": result.kind,
        "n": judge.overall.counts.get("n"),
        "decided": judge.overall.counts.get("decided"),
        "resamples": result.resamples,
    }
    for name in HEADLINE_FIGURES:
        figure = judge.figure(name)
        if figure is not None:
            figures[name] = figure.value
    confusion = judge.overall.confusion
    rows = dict(zip(confusion.rows, confusion.counts, strict=True)) if confusion is not None else {}
    binary = result.kind == "binary"
    figures["positives"] = sum(rows.get(PASS, ())) if binary else None
    figures["negatives"] = sum(rows.get(FAIL, ())) if binary else None
    return figures
