"""Judging the judges: how often a judge agrees with people, where it goes wrong, and what to believe.

``calibrate(dataset, judges)`` compares judges with human labels, side by side,
from a labelled file (JSONL, CSV, YAML, or a suite's ``label: good|bad`` cases),
either running the judges or reading their recorded replies with their own
classifiers (no model call). Every figure carries a seeded bootstrap 95%
interval; ABSTAIN and ERROR are counted on their own, never dropped or guessed.
``corrected_pass_rate`` turns a run's observed pass rate into a Rogan-Gladen
estimate from a judge's TPR and TNR; ``identify`` names a judge object the way
a stored calibration is filed (``calibration_figures``: the numbers kept with it).

The figures need numpy (``pip install 'jurybox[calibrate]'``). Every name is imported
when first used, so reading labels, identities and corrected pass rates (what
``jurybox run`` asks of this package) works without numpy and loads only its own modules.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from jurybox.calibrate._bootstrap import Bootstrap
    from jurybox.calibrate._calibrate import calibrate, summarise
    from jurybox.calibrate._classifiers import FirstMatch
    from jurybox.calibrate._console import to_console
    from jurybox.calibrate._correction import CorrectedRate, corrected_pass_rate
    from jurybox.calibrate._errors import CalibrationInputError, Problem
    from jurybox.calibrate._figures import FIGURES_BY_KIND
    from jurybox.calibrate._gate import Shortfall, parse_bars, shortfalls
    from jurybox.calibrate._html import to_html
    from jurybox.calibrate._labels import (
        LABEL_KINDS,
        LabelKind,
        LabelledRow,
        LabelledSet,
        labelled_set_from_rows,
        load_labelled_set,
    )
    from jurybox.calibrate._markdown import to_markdown
    from jurybox.calibrate._metrics import kappa_of
    from jurybox.calibrate._recorded import RecordedReply, load_recorded, recorded_from_rows
    from jurybox.calibrate._result import (
        CalibrationResult,
        Confusion,
        Disagreement,
        Distribution,
        Figure,
        Figures,
        JudgeCalibration,
        Usage,
    )
    from jurybox.calibrate._settings import DEFAULT_RESAMPLES, DEFAULT_SEED
    from jurybox.calibrate._specs import JudgeIdentity, JudgeSpec, identify, judge_spec
    from jurybox.calibrate._stored import calibration_figures
    from jurybox.calibrate._verdicts import RowVerdict

# Every name is imported on first use, from where it lives: the figures need numpy (an extra), the
# renderers rich's tables, and `jurybox run` asks this package only for a judge's identity (and, with a
# store that holds calibrations, corrected rates), so it loads those modules alone.
_LAZY = {
    "FirstMatch": "_classifiers",
    "CorrectedRate": "_correction",
    "corrected_pass_rate": "_correction",
    "CalibrationInputError": "_errors",
    "Problem": "_errors",
    "LABEL_KINDS": "_labels",
    "LabelKind": "_labels",
    "LabelledRow": "_labels",
    "LabelledSet": "_labels",
    "labelled_set_from_rows": "_labels",
    "load_labelled_set": "_labels",
    "RecordedReply": "_recorded",
    "load_recorded": "_recorded",
    "recorded_from_rows": "_recorded",
    "CalibrationResult": "_result",
    "Confusion": "_result",
    "Disagreement": "_result",
    "Distribution": "_result",
    "Figure": "_result",
    "Figures": "_result",
    "JudgeCalibration": "_result",
    "Usage": "_result",
    "DEFAULT_RESAMPLES": "_settings",
    "DEFAULT_SEED": "_settings",
    "JudgeIdentity": "_specs",
    "JudgeSpec": "_specs",
    "identify": "_specs",
    "judge_spec": "_specs",
    "calibration_figures": "_stored",
    "RowVerdict": "_verdicts",
    "to_console": "_console",
    "to_html": "_html",
    "to_markdown": "_markdown",
    "Bootstrap": "_bootstrap",
    "calibrate": "_calibrate",
    "summarise": "_calibrate",
    "FIGURES_BY_KIND": "_figures",
    "Shortfall": "_gate",
    "parse_bars": "_gate",
    "shortfalls": "_gate",
    "kappa_of": "_metrics",
}
NUMPY_MISSING = "jurybox calibrate needs numpy: pip install 'jurybox[calibrate]'"


class NumpyMissingError(ImportError):
    """The ``calibrate`` extra (numpy) is not installed; the message names it."""


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    try:
        value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    except ImportError as error:
        if error.name != "numpy":
            raise
        raise NumpyMissingError(NUMPY_MISSING) from None
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


__all__ = [
    "DEFAULT_RESAMPLES",
    "DEFAULT_SEED",
    "FIGURES_BY_KIND",
    "LABEL_KINDS",
    "NUMPY_MISSING",
    "Bootstrap",
    "CalibrationInputError",
    "CalibrationResult",
    "Confusion",
    "CorrectedRate",
    "Disagreement",
    "Distribution",
    "Figure",
    "Figures",
    "FirstMatch",
    "JudgeCalibration",
    "JudgeIdentity",
    "JudgeSpec",
    "LabelKind",
    "LabelledRow",
    "LabelledSet",
    "NumpyMissingError",
    "Problem",
    "RecordedReply",
    "RowVerdict",
    "Shortfall",
    "Usage",
    "calibrate",
    "calibration_figures",
    "corrected_pass_rate",
    "identify",
    "judge_spec",
    "kappa_of",
    "labelled_set_from_rows",
    "load_labelled_set",
    "load_recorded",
    "parse_bars",
    "recorded_from_rows",
    "shortfalls",
    "summarise",
    "to_console",
    "to_html",
    "to_markdown",
]
