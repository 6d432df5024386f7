"""The JSON verdicts the built-in judges ask for, as pydantic models (validation and JSON schema)."""

from __future__ import annotations

from pydantic import BaseModel, Field


class ScoreVerdict(BaseModel):
    """A 0..1 score with reasons: correctness, ranking, and the JsonVerdict default."""

    score: float = Field(ge=0.0, le=1.0, description="0 = completely wrong, 1 = fully correct")
    reasoning: str = Field(description="Why this score, citing the evidence")
    issues: list[str] = Field(default_factory=list, description="Concrete problems found")
    strengths: list[str] = Field(default_factory=list, description="What is done well")


class RelevanceVerdict(BaseModel):
    """Whether results are relevant to a query (the Spector relevance format)."""

    relevant: bool
    confidence: float = Field(ge=0.0, le=1.0)
    reasoning: str


class RubricVerdict(BaseModel):
    """A 0-100 score for each rubric criterion, with issues and strengths."""

    scores: dict[str, float] = Field(description="criterion name -> score from 0 to 100")
    reasoning: str
    issues: list[str] = Field(default_factory=list)
    strengths: list[str] = Field(default_factory=list)


class TopicFinding(BaseModel):
    topic: str
    covered: bool
    evidence: str = Field(default="", description="The passage that covers it, or why it is missing")


class CoverageVerdict(BaseModel):
    """Which of the requested topics the output covers."""

    topics: list[TopicFinding]
    reasoning: str = ""


class ClaimFinding(BaseModel):
    claim: str
    supported: bool
    source: int | None = Field(default=None, description="Number of the source that supports it, if any")


class FaithfulnessVerdict(BaseModel):
    """Every factual claim of the output and whether the sources support it."""

    claims: list[ClaimFinding]
    reasoning: str = ""


class ClarificationVerdict(BaseModel):
    """Whether a reply asks the user a question instead of answering."""

    asks_question: bool
    confidence: float = Field(ge=0.0, le=1.0)
    reasoning: str
