"""Model-backed judges: template -> model -> classifier, verdicts parsed so they never fail open.

Built-in judges (each a factory taking ``model=``, ``threshold=`` and its own keyword options):
correctness, relevance, ranking, coverage, rubric, faithfulness, pairwise, clarification, and
agentic (a judge that may read the workspace and run allowed commands before deciding);
``similarity`` is the offline embedding judge (extra ``jurybox[embed]``).
Classifiers usable on their own: Choice, Rating, JsonVerdict. Every one reads a reply under one
rule (``read_verdict``): reply and material in one normal form (``normal_form``), every verdict
found (``VerdictReader.find``), conflicts abstain, and a pass the material states (``Material``)
is not accepted.
"""

from jurybox.llm._agentic import AgenticJudge, agentic
from jurybox.llm._builtins import clarification, correctness, coverage, faithfulness, ranking, relevance, rubric
from jurybox.llm._classifiers import FACTUALITY_LABELS, Choice, Classifier, OnConflict, Rating
from jurybox.llm._json_verdict import JsonVerdict
from jurybox.llm._judge import LLMJudge
from jurybox.llm._model import ModelRef
from jurybox.llm._normal import normal_form
from jurybox.llm._pairwise import PairwiseJudge, pairwise
from jurybox.llm._planted import Material
from jurybox.llm._reading import Found, Reading, VerdictReader, read_verdict
from jurybox.llm._settings import JudgeSettings
from jurybox.llm._similarity import (
    EMBED_SKIP_REASON,
    EmbeddingsUnavailableError,
    SimilarityJudge,
    embeddings_installed,
    similarity,
)
from jurybox.llm._template import CONTEXT_VARIABLES, Template, TemplateError
from jurybox.llm._text import json_objects, strip_think
from jurybox.llm._verdicts import (
    ClaimFinding,
    ClarificationVerdict,
    CoverageVerdict,
    FaithfulnessVerdict,
    RelevanceVerdict,
    RubricVerdict,
    ScoreVerdict,
    TopicFinding,
)

__all__ = [
    "CONTEXT_VARIABLES",
    "EMBED_SKIP_REASON",
    "FACTUALITY_LABELS",
    "AgenticJudge",
    "Choice",
    "ClaimFinding",
    "ClarificationVerdict",
    "Classifier",
    "CoverageVerdict",
    "EmbeddingsUnavailableError",
    "FaithfulnessVerdict",
    "Found",
    "JsonVerdict",
    "JudgeSettings",
    "LLMJudge",
    "Material",
    "ModelRef",
    "OnConflict",
    "PairwiseJudge",
    "Rating",
    "Reading",
    "RelevanceVerdict",
    "RubricVerdict",
    "ScoreVerdict",
    "SimilarityJudge",
    "Template",
    "TemplateError",
    "TopicFinding",
    "VerdictReader",
    "agentic",
    "clarification",
    "correctness",
    "coverage",
    "embeddings_installed",
    "faithfulness",
    "json_objects",
    "normal_form",
    "pairwise",
    "ranking",
    "read_verdict",
    "relevance",
    "rubric",
    "similarity",
    "strip_think",
]
