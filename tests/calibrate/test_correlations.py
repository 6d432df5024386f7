"""Recorded metric scores against expert annotations (SummEval, Topical-Chat USR), checked against scipy.

The scores are jurybox's ``similar`` judge on each system output, recorded as text
and read back with jurybox's ``Rating`` classifier, exactly as a metric's recorded
output would be (``data/make_metric_scores.py`` regenerates them). The table in
docs/calibration.md is ``correlation_table()``.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from calibrate_data import DATA, SHARED
from scipy import stats

from jurybox.calibrate import CalibrationResult, JudgeSpec, calibrate, labelled_set_from_rows, recorded_from_rows
from jurybox.llm import Rating

SETS = {
    "summeval": ("SummEval (1,600 summaries; reference summary)", ("coherence", "consistency", "fluency", "relevance")),
    "topical_chat": (
        "Topical-Chat USR (360 responses; knowledge fact)",
        ("understandability", "naturalness", "coherence", "engagingness", "groundedness", "overall"),
    ),
}
SCORE = Rating(r"^\s*([0-9]+(?:\.[0-9]+)?)\s*$", min=0, max=1)


def _rows(name: str) -> list[dict[str, Any]]:
    lines = (DATA / f"{name}_similar.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def calibrated(name: str, dimension: str, resamples: int = 100) -> CalibrationResult:
    rows = _rows(name)
    labelled = labelled_set_from_rows(
        [{"id": r["id"], "output": "", "label": r["scores"][dimension]} for r in rows],
        source=f"{name}:{dimension}",
        kind="numeric",
    )
    replies = recorded_from_rows([{"id": r["id"], "text": repr(r["similar"])} for r in rows])
    return calibrate(labelled, [JudgeSpec.recorded("similar", SCORE)], recorded=replies, resamples=resamples)


@pytest.mark.parametrize(("name", "dimension"), [(n, d) for n, (_, dims) in SETS.items() for d in dims])
def test_correlations_match_scipy(name: str, dimension: str) -> None:
    rows = _rows(name)
    human = [r["scores"][dimension] for r in rows]
    metric = [r["similar"] for r in rows]
    figures = calibrated(name, dimension).judges[0].overall.figures
    assert figures["coverage"].value == 1.0  # every recorded score was read
    assert figures["spearman"].value == pytest.approx(stats.spearmanr(human, metric).statistic, abs=1e-12)
    assert figures["kendall"].value == pytest.approx(stats.kendalltau(human, metric).statistic, abs=1e-12)
    assert figures["pearson"].value == pytest.approx(stats.pearsonr(human, metric).statistic, abs=1e-12)
    for key in ("spearman", "kendall"):
        low, high = figures[key].low, figures[key].high
        assert low is not None and high is not None and low <= figures[key].value <= high  # type: ignore[operator]


@pytest.mark.skipif(SHARED is None, reason="shared/realdata is not beside the clone")
@pytest.mark.parametrize("name", list(SETS))
def test_recorded_scores_are_what_the_judge_gives(name: str) -> None:
    import sys

    sys.path.insert(0, str(DATA))
    from make_metric_scores import rows  # the generator, run on the first rows of the source files

    assert SHARED is not None
    recorded = _rows(name)
    for fresh, kept in zip(rows(name, SHARED), recorded[:40], strict=False):
        assert fresh == kept


def correlation_table(resamples: int = 1000) -> str:
    """The Markdown table of docs/calibration.md."""
    lines = [
        "| data set | dimension | n | Spearman rho [95% CI] | Kendall tau-b [95% CI] |",
        "| --- | --- | --- | --- | --- |",
    ]
    for name, (title, dimensions) in SETS.items():
        for dimension in dimensions:
            judge = calibrated(name, dimension, resamples).judges[0]
            f = judge.overall.figures
            cells = [f"{f[k].value:.3f} [{f[k].low:.3f}, {f[k].high:.3f}]" for k in ("spearman", "kendall")]
            lines.append(f"| {title} | {dimension} | {judge.overall.counts['n']} | {cells[0]} | {cells[1]} |")
    return "\n".join(lines)


if __name__ == "__main__":  # print the docs table
    print(correlation_table())
