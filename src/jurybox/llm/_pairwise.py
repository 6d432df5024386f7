"""Pairwise comparison (candidate vs baseline) in both orders, with position bias reported."""

from __future__ import annotations

import asyncio
from typing import Any, Literal, Unpack

from jurybox.core import TIER_LLM, CategoricalScore, Context, Judgment, Status, judge_factory
from jurybox.llm import _prompts as prompts
from jurybox.llm._classifiers import Choice
from jurybox.llm._judge import LLMJudge, combined_usage
from jurybox.llm._model import ModelRef, resolve
from jurybox.llm._settings import JudgeSettings, check_text, check_unit, split_settings
from jurybox.llm._template import TemplateError

OnInconsistent = Literal["abstain", "tie"]
#: Worth of each outcome for the candidate (the output under test).
OUTCOMES = {"win": 1.0, "tie": 0.5, "loss": 0.0}
_FIRST = {"A": "win", "B": "loss", "C": "tie"}  # candidate shown as A
_SECOND = {"A": "loss", "B": "win", "C": "tie"}  # candidate shown as B
GENERAL_QUALITY = "helpfulness, correctness, relevance, depth and clarity for the request"


class PairwiseJudge:
    """Compares the case's output (the candidate) with a baseline, asking in both orders.

    A verdict counts only when both orders agree once mapped back to the
    candidate. When they disagree the model was swayed by position, and the
    judgment is ABSTAIN (default) or a tie, never a win for either side;
    ``metadata["position_bias"]`` says ``"none"``, ``"first"`` / ``"second"``
    (the model picked that slot both times) or ``"inconsistent"`` (a win one
    way, a tie the other).

    The score is categorical: win 1.0, tie 0.5, loss 0.0 for the candidate.
    """

    kind = "llm"
    tier = TIER_LLM

    def __init__(
        self,
        baseline: str | None,
        *,
        criteria: str | None,
        model: ModelRef,
        threshold: float,
        on_inconsistent: OnInconsistent,
        name: str,
        settings: JudgeSettings,
    ) -> None:
        check_text("pairwise", "baseline", baseline)
        check_text("pairwise", "criteria", criteria)
        check_unit("pairwise", "threshold", threshold)
        if on_inconsistent not in ("abstain", "tie"):
            raise ValueError(f"pairwise: on_inconsistent must be 'abstain' or 'tie', got {on_inconsistent!r}")
        on_conflict, rest = split_settings(settings)
        self.baseline = baseline
        self.on_inconsistent = on_inconsistent
        self.model = model
        self.name = name
        # One LLMJudge does the asking (retries, samples, fallback); this class renders both orders.
        self.judge = LLMJudge(
            prompts.PAIRWISE,
            Choice({"A": 1.0, "B": 0.0, "C": 0.5}, on_conflict=on_conflict),
            name=name,
            model=model,
            threshold=float(threshold),
            options={"criteria": criteria or GENERAL_QUALITY, "response_a": "", "response_b": ""},
            # This class renders both orders itself: the two responses and the request are all it shows.
            **{**rest, "conversation": False, "use_lessons": False},
        )
        self.sees = ("input", "output")

    @property
    def threshold(self) -> float:
        return self.judge.threshold

    async def __call__(self, context: Context) -> Judgment:
        return self.judge.apply_fallback(await self._compare(context)).named(self.name)

    async def _compare(self, context: Context) -> Judgment:
        try:
            model = resolve(self.model)
        except Exception as exc:
            return Judgment.errored(f"cannot get the judge model: {exc}", exception=exc)
        baseline = self.baseline if self.baseline is not None else context.expected
        if baseline is None:
            return Judgment.errored("pairwise needs a baseline: pass baseline=... or set the case's expected")
        try:
            first = self.judge.template.render(
                context, {**self.judge.options, "response_a": context.output, "response_b": baseline}
            )
            second = self.judge.template.render(
                context, {**self.judge.options, "response_a": baseline, "response_b": context.output}
            )
        except TemplateError as exc:
            return Judgment.errored(f"cannot build the judge prompt: {exc}", exception=exc)
        one, two = await asyncio.gather(self.judge.ask(model, first), self.judge.ask(model, second))
        return self._combine(one, two)

    def _combine(self, one: Judgment, two: Judgment) -> Judgment:
        children = {"candidate_first": one, "baseline_first": two}
        metadata: dict[str, Any] = combined_usage([one, two])
        for run in (one, two):
            if not run.status.decided:
                reason = f"no verdict in the {'candidate' if run is one else 'baseline'}-first order: {run.reasoning}"
                status = Status.ERROR if run.status is Status.ERROR else Status.ABSTAIN
                return Judgment(status, reasoning=reason, children=children, error=run.error, metadata=metadata)
        first_label, second_label = str(one.metadata["label"]), str(two.metadata["label"])
        outcome_one, outcome_two = _FIRST[first_label], _SECOND[second_label]
        metadata["orders"] = {"candidate_first": outcome_one, "baseline_first": outcome_two}
        if outcome_one == outcome_two:
            metadata["position_bias"] = "none"
            return self._verdict(
                outcome_one, f"both orders agree: the candidate {_says(outcome_one)}", children, metadata
            )
        if first_label == second_label and first_label in ("A", "B"):
            metadata["position_bias"] = "first" if first_label == "A" else "second"
        else:
            metadata["position_bias"] = "inconsistent"
        reason = (
            f"the orders disagree (candidate first: {outcome_one}, baseline first: {outcome_two}; "
            f"position bias: {metadata['position_bias']})"
        )
        if self.on_inconsistent == "tie":
            return self._verdict("tie", reason + "; counted as a tie", children, metadata)
        return Judgment.abstained(reason, children=children, metadata=metadata)

    def _verdict(self, outcome: str, reason: str, children: dict[str, Judgment], metadata: dict[str, Any]) -> Judgment:
        score = CategoricalScore(outcome, OUTCOMES)
        status = Status.PASS if score.normalized() >= self.threshold else Status.FAIL
        return Judgment(
            status, score=score, reasoning=reason, children=children, metadata={**metadata, "label": outcome}
        )

    def __repr__(self) -> str:
        return f"<llm judge {self.name} (pairwise) threshold={self.threshold:g}>"


@judge_factory(tier=TIER_LLM)
def pairwise(
    baseline: str | None = None,
    *,
    criteria: str | None = None,
    model: ModelRef = None,
    threshold: float = 0.5,
    on_inconsistent: OnInconsistent = "abstain",
    name: str = "pairwise",
    **settings: Unpack[JudgeSettings],
) -> PairwiseJudge:
    """Is the output at least as good as a baseline? Asked in both orders (A/B then B/A).

    Args:
        baseline: The answer to compare with; None uses the case's ``expected``.
        criteria: What "better" means (default: helpfulness, correctness, relevance, depth, clarity).
        model: Judge model, spec string, or None for the configured one.
        threshold: Pass at this outcome worth or above (win 1, tie 0.5, loss 0;
            default 0.5: at least a tie).
        on_inconsistent: When the two orders disagree: ``"abstain"`` (default) or ``"tie"``.
        name: The judge's name in reports.
        **settings: Shared options (retries, samples, fallback_score, ...).
    """
    return PairwiseJudge(
        baseline,
        criteria=criteria,
        model=model,
        threshold=threshold,
        on_inconsistent=on_inconsistent,
        name=name,
        settings=settings,
    )


def _says(outcome: str) -> str:
    return {"win": "is better", "tie": "ties with the baseline", "loss": "is worse"}[outcome]
