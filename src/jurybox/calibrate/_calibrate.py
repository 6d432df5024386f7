"""``calibrate``: judges against human labels, side by side, every figure with its interval."""

from __future__ import annotations

import asyncio
import concurrent.futures
from collections.abc import Coroutine, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from jurybox.calibrate._bootstrap import Bootstrap
from jurybox.calibrate._disagreements import disagreements
from jurybox.calibrate._errors import CalibrationInputError
from jurybox.calibrate._figures import figures, interval_alpha, nominal_alpha
from jurybox.calibrate._labels import LabelKind, LabelledSet, load_labelled_set
from jurybox.calibrate._live import DEFAULT_CONCURRENCY, live_verdicts
from jurybox.calibrate._recorded import RecordedReply, load_recorded, recorded_verdicts
from jurybox.calibrate._result import CalibrationResult, Distribution, Figure, JudgeCalibration, Usage
from jurybox.calibrate._settings import DEFAULT_RESAMPLES, DEFAULT_SEED
from jurybox.calibrate._slices import slice_rows
from jurybox.calibrate._specs import JudgeSpec, judge_spec
from jurybox.calibrate._verdicts import RowVerdict

MAX_DISAGREEMENTS = 50
"""Disagreements kept per judge (the count of all of them is kept too)."""
_BINS = 10


def calibrate(
    dataset: LabelledSet | str | Path,
    judges: Sequence[Any] | Any,
    *,
    recorded: Sequence[RecordedReply] | str | Path | None = None,
    kind: LabelKind | None = None,
    slices: Sequence[str] = (),
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
    confidence: float = 0.95,
    model: Any = None,
    concurrency: int = DEFAULT_CONCURRENCY,
    max_disagreements: int = MAX_DISAGREEMENTS,
) -> CalibrationResult:
    """Measure judges against human labels.

    Args:
        dataset: A LabelledSet or the path of a labelled file (JSONL, CSV, YAML, or a suite with labelled cases).
        judges: Judge specs: names (``"correctness"``, ``"correctness: {threshold: 0.8}"``),
            ``"module:attr"``, judge objects (juries and cascades too) or JudgeSpecs.
        recorded: Recorded judge replies (a JSONL path or loaded replies): read
            with each judge's classifier, no model call. None runs the judges.
        kind: The label kind when loading ``dataset`` (None: inferred).
        slices: Fields to slice by: ``"tags"`` or a metadata key.
        resamples: Bootstrap resamples per interval (0: no intervals).
        seed: The bootstrap seed; the same inputs and seed give the same intervals.
        confidence: The intervals' level.
        model: The judge model for registered judges whose options name none.
        concurrency: Judge calls in flight at once when running judges.
        max_disagreements: Disagreements kept per judge.

    Raises:
        CalibrationInputError: a bad labelled set, recorded file or judge spec (every problem listed).
    """
    labelled = dataset if isinstance(dataset, LabelledSet) else load_labelled_set(dataset, kind=kind)
    given = list(judges) if isinstance(judges, list | tuple) else [judges]
    if not given:
        raise CalibrationInputError.one("--judge", None, "", "give at least one judge")
    specs = [judge_spec(item, model=model) for item in given]
    names = [spec.name for spec in specs]
    duplicated = sorted({name for name in names if names.count(name) > 1})
    if duplicated:
        raise CalibrationInputError.one(
            "--judge", None, "", f"two judges are named {', '.join(duplicated)}: name them apart"
        )
    if labelled.kind == "preference":
        for spec in specs:
            if spec.mode == "single":
                raise CalibrationInputError.one(
                    "--judge", None, "", f"judge {spec.name!r} is not pairwise, but the labels are preferences"
                )
    bootstrap = Bootstrap(resamples, seed, confidence)
    if recorded is not None:
        source = str(recorded) if isinstance(recorded, str | Path) else "<recorded>"
        replies = load_recorded(recorded) if isinstance(recorded, str | Path) else list(recorded)
        verdicts = recorded_verdicts(labelled, specs, replies, source)
    else:
        verdicts = _run(live_verdicts(labelled, specs, concurrency=concurrency))
    return summarise(labelled, specs, verdicts, bootstrap, slices=slices, max_disagreements=max_disagreements)


def _run(work: Coroutine[Any, Any, dict[str, list[RowVerdict]]]) -> dict[str, list[RowVerdict]]:
    """Run the judges' coroutine, also from inside a running event loop (a notebook, an async test)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(work)
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, work).result()


def summarise(
    labelled: LabelledSet,
    specs: Sequence[JudgeSpec],
    verdicts: dict[str, list[RowVerdict]],
    bootstrap: Bootstrap,
    *,
    slices: Sequence[str] = (),
    max_disagreements: int = MAX_DISAGREEMENTS,
) -> CalibrationResult:
    """The result of a calibration whose verdicts are known (from recorded replies or a live run)."""
    rows = labelled.rows
    judged = []
    for spec in specs:
        mine = verdicts[spec.name]
        overall = figures(labelled.kind, labelled.classes, rows, mine, bootstrap, spec.name)
        sliced = {}
        for field in slices:
            groups = slice_rows(rows, field)
            sliced[field] = {
                value: figures(
                    labelled.kind,
                    labelled.classes,
                    [rows[i] for i in positions],
                    [mine[i] for i in positions],
                    bootstrap,
                    f"{spec.name}/{field}={value}",
                )
                for value, positions in groups.items()
            }
        found = disagreements(labelled.kind, rows, mine)
        judged.append(
            JudgeCalibration(
                identity=spec.who,
                overall=overall,
                slices=sliced,
                disagreements=tuple(found[:max_disagreements]),
                disagreement_count=len(found),
                usage=_usage(mine),
                distribution=_distribution(labelled, mine),
                verdicts=tuple(mine),
            )
        )
    return CalibrationResult(
        dataset=labelled.source,
        kind=labelled.kind,
        rows=len(rows),
        classes=labelled.classes,
        raters=labelled.raters,
        humans=_human_agreement(labelled, bootstrap),
        judges=tuple(judged),
        resamples=bootstrap.resamples,
        seed=bootstrap.seed,
        confidence=bootstrap.confidence,
    )


def _human_agreement(labelled: LabelledSet, bootstrap: Bootstrap) -> dict[str, Figure]:
    """Alpha among the raters alone: how far people agree is as far as a judge can be expected to."""
    if len(labelled.raters) < 2:
        return {}
    if labelled.kind == "numeric":
        return {
            "alpha": interval_alpha(
                [[float(v) for v in row.raters.values()] for row in labelled.rows], bootstrap, "humans"
            )
        }
    return {
        "alpha": nominal_alpha([[str(v) for v in row.raters.values()] for row in labelled.rows], bootstrap, "humans")
    }


def _usage(verdicts: Sequence[RowVerdict]) -> Usage:
    tokens = [v.tokens for v in verdicts]
    costs = [v.cost for v in verdicts]
    latencies = [v.latency for v in verdicts]
    known_latency = [x for x in latencies if x is not None]
    return Usage(
        tokens=sum(t for t in tokens if t is not None) if verdicts and None not in tokens else None,
        cost=sum(c for c in costs if c is not None) if verdicts and None not in costs else None,
        latency=sum(known_latency) if verdicts and None not in latencies else None,
        latency_mean=sum(known_latency) / len(known_latency) if known_latency else None,
    )


def _distribution(labelled: LabelledSet, verdicts: Sequence[RowVerdict]) -> Distribution | None:
    """The judge's numbers binned per human label (numeric labels: one group), or None when it gave none."""
    pairs = [
        (row.label, v.value)
        for row, v in zip(labelled.rows, verdicts, strict=True)
        if v.value is not None and row.label is not None
    ]
    if not pairs:
        return None
    values = np.array([p[1] for p in pairs], dtype=np.float64)
    low, high = float(values.min()), float(values.max())
    if low == high:
        low, high = low - 0.5, high + 0.5
    edges = np.linspace(low, high, _BINS + 1)
    groups = (
        ["all"] if labelled.kind == "numeric" else [c for c in labelled.classes if any(str(p[0]) == c for p in pairs)]
    )
    counts = {}
    for group in groups:
        chosen = values if group == "all" else np.array([v for label, v in pairs if str(label) == group])
        hist, _ = np.histogram(chosen, bins=edges)
        counts[group] = tuple(int(c) for c in hist)
    return Distribution(tuple(float(e) for e in edges), counts)
