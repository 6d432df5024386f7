"""LLMBar's published evaluator statistics, reproduced from the raw completions alone.

Every ``statistics.json`` found (the committed copies, and every folder under
``shared/realdata/judge_outputs/llmbar`` when it is there, whatever subsets and
evaluators it holds) is checked: the completions are parsed by jurybox with the
evaluator's own rules, never by reading the source's parsed winner (the committed
copies have it removed).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from calibrate_data import DATA, SHARED
from llmbar import LLMBarRun, load_run, parse_count, source_winners
from sklearn.metrics import cohen_kappa_score

from jurybox.calibrate import CalibrationResult, calibrate, kappa_of


def _runs() -> Iterator[tuple[Path, Path]]:
    found: dict[str, tuple[Path, Path]] = {}
    for root in (DATA, SHARED / "judge_outputs" if SHARED else None):
        if root is None or not (root / "llmbar").is_dir():
            continue
        for folder in sorted((root / "llmbar").iterdir()):
            if (folder / "statistics.json").is_file():
                found[folder.name] = (folder, root / "llmbar_configs")
    yield from found.values()


RUNS = list(_runs())


def _calibrated(folder: Path, configs: Path) -> tuple[LLMBarRun, CalibrationResult]:
    run = load_run(folder, configs)
    return run, calibrate(run.labelled, [run.spec], recorded=run.replies, resamples=50)


@pytest.mark.parametrize(("folder", "configs"), RUNS, ids=[folder.name for folder, _ in RUNS])
def test_published_counts_are_reproduced_from_raw_completions(folder: Path, configs: Path) -> None:
    run, result = _calibrated(folder, configs)
    published = {
        key: parse_count(run.statistics[key]) for key in ("correct_False", "correct_True", "correct_both", "equal")
    }
    judge = result.judges[0]
    n = result.rows
    assert f"/ {n} =" in run.statistics["correct_False"]
    if not run.ratings:
        # Comparison evaluators: jurybox's own figures are the published ones. No winner counts as
        # wrong; two missing winners are "equal" in the source, which jurybox counts as both_undecided.
        figures, counts = judge.overall.figures, judge.overall.counts
        ours = {
            "correct_False": round(figures["accuracy_ab"].value * n),  # type: ignore[operator]
            "correct_True": round(figures["accuracy_ba"].value * n),  # type: ignore[operator]
            "correct_both": round(figures["accuracy"].value * n),  # type: ignore[operator]
            "equal": counts["consistent"] + counts["both_undecided"],
        }
        assert ours == published
    # Every evaluator, ratings included: the source's scoring conventions applied to jurybox's parse.
    labels = {row.id: row.label for row in run.labelled.rows}
    tally = dict.fromkeys(published, 0)
    for verdict in judge.verdicts:
        first, second = source_winners(verdict, run.ratings)
        label = labels[verdict.id]
        tally["correct_False"] += first == label
        tally["correct_True"] += second == label
        tally["correct_both"] += first == label and second == label
        tally["equal"] += first == second
    assert tally == published


@pytest.mark.parametrize(("folder", "configs"), RUNS, ids=[folder.name for folder, _ in RUNS])
def test_published_kappa_comes_from_predictions_coded_0_1_against_labels_coded_1_2(folder: Path, configs: Path) -> None:
    run, result = _calibrated(folder, configs)
    judge = result.judges[0]
    labels = {row.id: row.label for row in run.labelled.rows}
    winners = [source_winners(v, run.ratings) for v in judge.verdicts]
    gold = [labels[v.id] for v in judge.verdicts]
    # LLMBar's evaluate.py: prediction int(winner) if winner in ("0", "1") else 0, i.e. "1" -> 1 and
    # "2" or None -> 0, compared with the labels as stored, 1 or 2.
    coded = [[1 if w[order] == "a" else 0 for w in winners] for order in (0, 1)]
    stored = [1 if label == "a" else 2 for label in gold]
    for order, key in enumerate(("kappa_False", "kappa_True")):
        assert kappa_of(coded[order], stored) == pytest.approx(run.statistics[key], abs=1e-12)
        assert cohen_kappa_score(coded[order], stored) == pytest.approx(run.statistics[key], abs=1e-12)
    assert kappa_of(coded[0], coded[1]) == pytest.approx(run.statistics["kappa_agreement"], abs=1e-12)
    # The kappa jurybox reports compares like with like: each order's winner (or undecided) with the label.
    ab = [o[0] for o in (v.orders for v in judge.verdicts) if o is not None]
    correct = cohen_kappa_score(ab, gold)
    assert judge.overall.figures["kappa_ab"].value == pytest.approx(correct, abs=1e-12)
    # A prediction of "2" is coded 0 and never matches a label stored as 2: the published kappa is another number.
    assert correct != pytest.approx(run.statistics["kappa_False"], abs=1e-3)


def test_the_committed_copies_hold_no_parsed_winner() -> None:
    for result in (DATA / "llmbar").glob("*/result.json"):
        assert '"winner"' not in result.read_text(encoding="utf-8")


def test_rating_evaluators_ties_are_ties_in_jurybox() -> None:
    folder = DATA / "llmbar" / "Natural__GPT-4_Rating"
    _, result = _calibrated(folder, DATA / "llmbar_configs")
    judge = result.judges[0]
    ties = sum(1 for v in judge.verdicts if v.outcome == "tie")
    assert ties == 10  # the source counted each as a win for the output shown second
    # jurybox: a tie is never right against a strict preference, and separate ratings cannot depend on order.
    assert judge.overall.counts["consistent"] == result.rows
    assert judge.overall.figures["accuracy_ab"].value == judge.overall.figures["accuracy"].value == 0.87


def test_abstentions_are_counted_not_guessed() -> None:
    _, result = _calibrated(DATA / "llmbar" / "Natural__PaLM2_Vanilla", DATA / "llmbar_configs")
    counts = result.judges[0].overall.counts
    assert counts["abstain_ab"] == counts["abstain_ba"] == 2
    assert counts["both_undecided"] == 2
    assert result.judges[0].overall.figures["coverage"].value == 0.98
