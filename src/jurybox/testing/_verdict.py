"""One ``expect`` step's verdict, in the form reports, the summary and JUnit properties read."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from jurybox.core import Judgment, Status, undecided_reply

# A provider error's message is "provider: what happened (N attempts)"; its middle is what a reasoning quotes.
_PROVIDER_MESSAGE = re.compile(r"^[\w.-]+: (?P<core>.*?)(?: \([^()]*\battempts?\))?$", re.DOTALL)


def _core(message: str) -> str:
    """What an error's message says, without a provider's name before it and the attempt count after."""
    match = _PROVIDER_MESSAGE.match(message)
    return match.group("core") if match else message


#: Reasoning longer than this is cut in properties and summaries (the full text is in the failure message).
REASONING_LIMIT = 500


@dataclass(frozen=True)
class Verdict:
    """What one step concluded.

    Attributes:
        step: The ``expect`` method, e.g. ``is_relevant_to``.
        judge: The judge's name.
        outcome: ``pass``, ``fail``, ``uncertain`` (a verdict under the confidence
            threshold) or ``error``/``abstain`` (the judge could not decide).
        confidence: The judge's confidence, when it gave one.
        confidence_threshold: The confidence threshold applied.
        reasoning: The judge's reasoning.
        soft: True for ``warn_*`` steps (they warn instead of failing).
        score: The judgment's score in 0..1, when it has one.
        degraded: True when the verdict came from a fallback policy (a neutral score used
            because the judge could not decide); every report shows it.
        model: The judge model that answered (an LLM judge's), named in warnings and summaries.
        reply: What an undecided judge replied (its first ``REPLY_SHOWN`` characters), when
            it could not decide and kept its model's words; None otherwise.
    """

    step: str
    judge: str
    outcome: str
    confidence: float | None
    confidence_threshold: float
    reasoning: str
    soft: bool = False
    score: float | None = None
    degraded: bool = False
    model: str | None = None
    reply: str | None = None

    @property
    def ok(self) -> bool:
        return self.outcome == "pass"

    @classmethod
    def from_judgment(cls, step: str, judgment: Judgment, *, confidence_threshold: float, soft: bool) -> Verdict:
        """Grade a judgment: a PASS under the confidence threshold is ``uncertain``, never a pass."""
        if judgment.status is Status.PASS:
            uncertain = judgment.confidence is not None and judgment.confidence < confidence_threshold
            outcome = "uncertain" if uncertain else "pass"
        elif judgment.status is Status.FAIL:
            # A low-confidence rejection is just as uncertain as a low-confidence pass.
            uncertain = judgment.confidence is not None and judgment.confidence < confidence_threshold
            outcome = "uncertain" if uncertain else "fail"
        else:
            outcome = judgment.status.value
        reasoning = judgment.reasoning
        if judgment.error is not None and _core(judgment.error.message) not in reasoning:
            reasoning = f"{reasoning} ({judgment.error.type}: {judgment.error.message})".strip()
        return cls(
            step=step,
            judge=judgment.judge or step,
            outcome=outcome,
            confidence=judgment.confidence,
            confidence_threshold=confidence_threshold,
            reasoning=reasoning,
            soft=soft,
            score=judgment.value,
            degraded=judgment.degraded,
            model=_model_name(judgment),
            reply=undecided_reply(judgment),
        )

    def describe(self) -> str:
        """A human line: ``is_relevant_to [relevance]: fail (confidence 0.91): the answer is about cats``."""
        degraded = " (degraded)" if self.degraded else ""
        model = f" judged by {self.model}" if self.model else ""
        return f"{self.step} [{self.judge}]{model}{degraded}: {self._outcome_text()}"

    def said(self) -> str:
        """What the judge concluded, for a failure's first line: ``relevance said fail (confidence 0.91): ...``."""
        degraded = " (degraded)" if self.degraded else ""
        return f"{self.judge}{degraded} said {self._outcome_text()}"

    def _outcome_text(self) -> str:
        confidence = "" if self.confidence is None else f" (confidence {self.confidence:.2f})"
        note = ""
        if self.outcome == "uncertain":
            note = f" -- under the confidence threshold {self.confidence_threshold:.2f}, so not a pass"
        elif self.outcome in ("error", "abstain"):
            note = " -- the judge could not decide, so not a pass"
        reasoning = f": {self.reasoning}" if self.reasoning else ""
        return f"{self.outcome}{confidence}{note}{reasoning}"

    def to_dict(self) -> dict[str, Any]:
        # ``degraded`` is written only when set, so ordinary verdicts keep their shape.
        data: dict[str, Any] = {
            "step": self.step,
            "judge": self.judge,
            "outcome": self.outcome,
            "confidence": self.confidence,
            "confidence_threshold": self.confidence_threshold,
            "score": None if self.score is None else round(self.score, 4),
            "soft": self.soft,
            "reasoning": self.reasoning[:REASONING_LIMIT],
        }
        if self.degraded:
            data["degraded"] = True
        if self.model:
            data["model"] = self.model
        if self.reply is not None:
            data["reply"] = self.reply
        return data

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), ensure_ascii=False, sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> Verdict:
        data = json.loads(text)
        return cls(**data)


def _model_name(judgment: Judgment) -> str | None:
    """The model an LLM judge's judgment says answered it (``metadata["model"]``), if any."""
    model = judgment.metadata.get("model")
    return model if isinstance(model, str) and model else None
