"""The JSON verdicts the built-in judges ask for, as pydantic models (validation and JSON schema)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from pydantic import BaseModel, ConfigDict, Field


class _Verdict(BaseModel):
    # Each model's validator and schema are built when a judge first uses it, not on import: a run
    # builds the one or two its judges ask for, not all nine (some 50 ms of every start-up).
    model_config = ConfigDict(defer_build=True)


class ScoreVerdict(_Verdict):
    """A 0..1 score with reasons: correctness, ranking, and the JsonVerdict default."""

    score: float = Field(ge=0.0, le=1.0, description="0 = completely wrong, 1 = fully correct")
    reasoning: str = Field(description="Why this score, citing the evidence")
    issues: list[str] = Field(default_factory=list, description="Concrete problems found")
    strengths: list[str] = Field(default_factory=list, description="What is done well")


class HundredPointVerdict(_Verdict):
    """A single 0-100 score with the issues and strengths behind it, and no reasoning field.

    Judges written for other tools often answer ``{"score": 85, "issues": [...],
    "strengths": [...]}``. The score-based built-in judges read it as their own verdict
    (``correctness``, ``ranking``: score / 100; ``rubric``: that score for every
    criterion), with the issues and strengths as the reasoning. A reply with a
    ``reasoning`` field is read in the judge's own format only, so a 0..1 score is never
    taken for a 0-100 one.
    """

    score: float = Field(ge=0.0, le=100.0, allow_inf_nan=False)
    issues: list[str]
    strengths: list[str]

    def reasons(self) -> str:
        """The issues and strengths as one line of reasoning."""
        parts = []
        if self.issues:
            parts.append("issues: " + "; ".join(self.issues))
        if self.strengths:
            parts.append("strengths: " + "; ".join(self.strengths))
        return ". ".join(parts) or f"score {self.score:g}/100"


class RelevanceVerdict(_Verdict):
    """Whether results are relevant to a query (the Spector relevance format)."""

    relevant: bool
    confidence: float = Field(ge=0.0, le=1.0)
    reasoning: str


class RubricVerdict(_Verdict):
    """A 0-100 score for each rubric criterion, with issues and strengths."""

    scores: dict[str, float] = Field(description="criterion name -> score from 0 to 100")
    reasoning: str
    issues: list[str] = Field(default_factory=list)
    strengths: list[str] = Field(default_factory=list)


class TopicFinding(_Verdict):
    topic: str
    covered: bool
    evidence: str = Field(default="", description="The passage that covers it, or why it is missing")


class CoverageVerdict(_Verdict):
    """Which of the requested topics the output covers."""

    topics: list[TopicFinding]
    reasoning: str = ""


class ClaimFinding(_Verdict):
    claim: str
    supported: bool
    source: int | None = Field(default=None, description="Number of the source that supports it, if any")


class FaithfulnessVerdict(_Verdict):
    """Every factual claim of the output and whether the sources support it."""

    claims: list[ClaimFinding]
    reasoning: str = ""


class ClarificationVerdict(_Verdict):
    """Whether a reply asks the user a question instead of answering."""

    asks_question: bool
    confidence: float = Field(ge=0.0, le=1.0)
    reasoning: str


def score_of_hundred(verdict: HundredPointVerdict) -> ScoreVerdict:
    """A 0-100 reply as a 0..1 score verdict (``correctness``, ``ranking``)."""
    return ScoreVerdict(
        score=verdict.score / 100.0,
        reasoning=verdict.reasons(),
        issues=verdict.issues,
        strengths=verdict.strengths,
    )


def rubric_of_hundred(verdict: HundredPointVerdict, criteria: Iterable[str]) -> RubricVerdict:
    """A 0-100 reply as a rubric verdict: the one overall score given to every criterion."""
    return RubricVerdict(
        scores=dict.fromkeys(criteria, verdict.score),
        reasoning="one overall score for every criterion; " + verdict.reasons(),
        issues=verdict.issues,
        strengths=verdict.strengths,
    )


def _loose(name: str) -> str:
    return " ".join(name.split()).casefold().rstrip(".:")


def criterion_scores(scores: Mapping[str, float], criteria: Sequence[str]) -> dict[str, float]:
    """Each criterion's score in a rubric reply, matched by name as loosely as stays unambiguous.

    A model rarely repeats a long, multi-line criterion byte for byte. A criterion's
    score is the one keyed by its exact name; else by its name with spacing, case and a
    closing full stop or colon ignored; else by its number in the prompt's list
    (``"1"``, ``"criterion 1"``); else, when the rubric has one criterion and the reply
    one score, that score. Two criteria reaching one key, or a key reached twice, match
    neither, so a criterion is never given another's score.
    """
    matched: dict[str, float] = {}
    loose: dict[str, list[str]] = {}
    for key in scores:
        loose.setdefault(_loose(key), []).append(key)
    taken: set[str] = set()
    for number, criterion in enumerate(criteria, start=1):
        if criterion in scores:
            matched[criterion] = scores[criterion]
            taken.add(criterion)
            continue
        keys = loose.get(_loose(criterion), []) or [
            key for key in scores if _loose(key) in (str(number), f"criterion {number}")
        ]
        if len(keys) == 1 and keys[0] not in taken:
            matched[criterion] = scores[keys[0]]
            taken.add(keys[0])
    if len(criteria) == 1 and not matched and len(scores) == 1:
        matched[criteria[0]] = next(iter(scores.values()))
    return matched
