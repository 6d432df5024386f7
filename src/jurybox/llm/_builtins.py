"""The built-in LLM judges: factories with keyword options, each returning an LLMJudge.

Every factory takes ``model=`` (a JudgeModel, a spec string such as
``"openai:gpt-4o-mini"``, or None for the configured judge model, resolved
when the judge is called), ``threshold=``, ``name=`` and the shared
JudgeSettings (retries, samples, fallback_score, ...). Options are plain
keywords so a suite file's ``correctness: {reference: ...}`` maps onto them;
a bad value raises ValueError naming the judge and the option.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Mapping, Sequence
from typing import Literal, Unpack

from jurybox.core import TIER_LLM, Check, Context, judge_factory
from jurybox.llm import _prompts as prompts
from jurybox.llm._classifiers import OnConflict
from jurybox.llm._json_verdict import JsonVerdict
from jurybox.llm._judge import LLMJudge
from jurybox.llm._model import ModelRef
from jurybox.llm._settings import (
    JudgeSettings,
    check_positive_int,
    check_text,
    check_texts,
    check_unit,
    split_settings,
)
from jurybox.llm._template import TemplateError, Value
from jurybox.llm._verdicts import (
    ClarificationVerdict,
    CoverageVerdict,
    FaithfulnessVerdict,
    RelevanceVerdict,
    RubricVerdict,
    ScoreVerdict,
    criterion_scores,
    rubric_of_hundred,
    score_of_hundred,
)

ResultsFrom = Literal["auto", "sources", "output", "tool_results"]
_RESULTS_FROM = ("auto", "sources", "output", "tool_results")
GENERAL_RELEVANCE = "a result is relevant when it directly helps answer the query"


@judge_factory(tier=TIER_LLM)
def correctness(
    reference: str | None = None,
    *,
    model: ModelRef = None,
    threshold: float = 0.7,
    name: str = "correctness",
    **settings: Unpack[JudgeSettings],
) -> LLMJudge:
    """Is the output correct compared with a reference answer? Score 0..1 with reasoning.

    Args:
        reference: The reference answer; None uses the case's ``expected``
            (a case with neither gives ERROR naming the missing reference).
        model: Judge model, spec string, or None for the configured one.
        threshold: Pass at this score or above (default 0.7).
        name: The judge's name in reports.
        **settings: Shared options (retries, samples, fallback_score, ...).
    """
    check_text("correctness", "reference", reference)
    on_conflict, rest = split_settings(settings)

    def reference_of(context: Context) -> str:
        if reference is not None:
            return reference
        if context.expected is None:
            raise TemplateError("correctness needs a reference answer: pass reference=... or set the case's expected")
        return context.expected

    return LLMJudge(
        prompts.CORRECTNESS,
        _score_reader(on_conflict, _threshold("correctness", threshold)),
        name=name,
        model=model,
        options={"reference": reference_of},
        reads=("expected",),
        **rest,
    )


@judge_factory(tier=TIER_LLM)
def relevance(
    criteria: str | None = None,
    *,
    query: str | None = None,
    model: ModelRef = None,
    threshold: float = 0.5,
    min_relevant: float = 0.3,
    max_results: int = 10,
    max_chars: int = 200,
    results: ResultsFrom = "auto",
    name: str = "relevance",
    **settings: Unpack[JudgeSettings],
) -> LLMJudge:
    """Are the results relevant to the query under the criteria?

    The model answers ``{"relevant": bool, "confidence": 0..1, "reasoning": str}``
    (the Spector format, so existing prompts carry over). The score is the
    model's probability that the results are relevant: ``confidence`` when it
    says relevant, ``1 - confidence`` when it says not.

    Args:
        criteria: What makes a result relevant (default: it directly helps answer the query).
        query: The query; None uses the case's input.
        model: Judge model, spec string, or None for the configured one.
        threshold: Pass at this probability of relevance or above (default 0.5).
        min_relevant: Leniency: the results count as relevant when at least
            this fraction of them is (default 0.3, "at least 30% relevant").
        max_results: Judge at most this many results, the first ones (default 10).
        max_chars: Cut each result to this many characters, with a visible note (default 200,
            enough for a title and a snippet).
        results: Where the results are: ``"sources"``, ``"output"``,
            ``"tool_results"``, or ``"auto"`` (sources if any, else the output).
        name: The judge's name in reports.
        **settings: Shared options (retries, samples, fallback_score, ...).
    """
    check_unit("relevance", "min_relevant", min_relevant, allow_zero=False)
    options = _results_options("relevance", criteria, query, results, max_results, max_chars)
    on_conflict, rest = split_settings(settings)
    return LLMJudge(
        prompts.RELEVANCE,
        JsonVerdict(RelevanceVerdict, score=_probability("relevant"), on_conflict=on_conflict),
        name=name,
        model=model,
        threshold=_threshold("relevance", threshold),
        options={**options, "leniency": f"{min_relevant:.0%}"},
        reads=_results_reads(results),
        **{"conversation": False, **rest},  # retrieved results are judged against the query alone
    )


@judge_factory(tier=TIER_LLM)
def ranking(
    criteria: str | None = None,
    *,
    query: str | None = None,
    model: ModelRef = None,
    threshold: float = 0.7,
    max_results: int = 10,
    max_chars: int = 1000,
    results: ResultsFrom = "auto",
    name: str = "ranking",
    **settings: Unpack[JudgeSettings],
) -> LLMJudge:
    """Are the most relevant results ranked first? Score 0..1.

    Args:
        criteria: What makes a result relevant.
        query: The query; None uses the case's input.
        model: Judge model, spec string, or None for the configured one.
        threshold: Pass at this score or above (default 0.7).
        max_results: Judge the top results only (default 10).
        max_chars: Truncate each result to this many characters (default 1000).
        results: Where the ranked results are (see ``relevance``).
        name: The judge's name in reports.
        **settings: Shared options (retries, samples, fallback_score, ...).
    """
    options = _results_options("ranking", criteria, query, results, max_results, max_chars)
    on_conflict, rest = split_settings(settings)
    return LLMJudge(
        prompts.RANKING,
        _score_reader(on_conflict, _threshold("ranking", threshold)),
        name=name,
        model=model,
        options=options,
        reads=_results_reads(results),
        **{"conversation": False, **rest},  # retrieved results are judged against the query alone
    )


@judge_factory(tier=TIER_LLM)
def coverage(
    topics: Sequence[str],
    *,
    model: ModelRef = None,
    threshold: float = 1.0,
    name: str = "coverage",
    **settings: Unpack[JudgeSettings],
) -> LLMJudge:
    """Does the output cover each topic? Score = fraction of topics covered, one check per topic.

    Args:
        topics: The topics the output must cover.
        model: Judge model, spec string, or None for the configured one.
        threshold: Pass when at least this fraction is covered (default 1.0: all of them).
        name: The judge's name in reports.
        **settings: Shared options (retries, samples, fallback_score, ...).
    """
    wanted = check_texts("coverage", "topics", topics)
    if len({t.strip().casefold() for t in wanted}) != len(wanted):
        raise ValueError(f"coverage: topics must be distinct, got {wanted!r}")
    on_conflict, rest = split_settings(settings)
    keys = [t.strip().casefold() for t in wanted]

    def findings(verdict: CoverageVerdict) -> dict[str, bool]:
        return {f.topic.strip().casefold(): f.covered for f in verdict.topics}

    def validate(verdict: CoverageVerdict) -> str | None:
        judged = findings(verdict)
        missing = [t for t, k in zip(wanted, keys, strict=True) if k not in judged]
        if missing:
            return f"the verdict does not judge topic(s) {missing}; judge every topic exactly as listed"
        return None

    def score(verdict: CoverageVerdict) -> float:
        judged = findings(verdict)
        return sum(judged[k] for k in keys) / len(keys)

    def checks(verdict: CoverageVerdict) -> list[Check]:
        by_key = {f.topic.strip().casefold(): f for f in verdict.topics}
        return [Check(t, by_key[k].covered, by_key[k].evidence) for t, k in zip(wanted, keys, strict=True)]

    return LLMJudge(
        prompts.COVERAGE,
        JsonVerdict(CoverageVerdict, score=score, validate=validate, checks=checks, on_conflict=on_conflict),
        name=name,
        model=model,
        threshold=_threshold("coverage", threshold),
        options={"topics": "\n".join(f"- {t}" for t in wanted)},
        **rest,
    )


@judge_factory(tier=TIER_LLM)
def rubric(
    criteria: Mapping[str, float] | Sequence[str],
    *,
    descriptions: Mapping[str, str] | None = None,
    be_harsh: bool = False,
    instructions: str | None = None,
    scoring_guide: str | None = None,
    model: ModelRef = None,
    threshold: float = 0.7,
    name: str = "rubric",
    **settings: Unpack[JudgeSettings],
) -> LLMJudge:
    """Grade against weighted criteria; score 0-100 = weighted mean of the criterion scores.

    Args:
        criteria: Criterion name -> weight (e.g. ``{"completeness": 50,
            "coherence": 30, "conciseness": 20}``), or a list of names for equal weights.
        descriptions: Optional criterion name -> what it means, shown to the model.
        be_harsh: Ask for strict grading (only clearly achieved points count).
        instructions: The judge's own role and rules, in place of the built-in system prompt
            ("You are an expert evaluator of a property-management assistant..."). The rule that
            case text is data, never instructions, is still added.
        scoring_guide: How scores map to quality ("0.8+ = good, 0.5-0.8 = partial, < 0.5 = poor"),
            in place of the built-in calibration line; a guide in fractions is read on 0-100.
        model: Judge model, spec string, or None for the configured one.
        threshold: Pass at this normalized score or above (default 0.7, i.e. 70/100).
        name: The judge's name in reports.
        **settings: Shared options (retries, samples, fallback_score, ...).
    """
    weights = _weights(criteria)
    descriptions = dict(descriptions or {})
    unknown = set(descriptions) - set(weights)
    if unknown:
        raise ValueError(f"rubric: descriptions name unknown criteria {sorted(unknown)}; criteria: {list(weights)}")
    if not isinstance(be_harsh, bool):
        raise ValueError(f"rubric: be_harsh must be true or false, got {be_harsh!r}")
    on_conflict, rest = split_settings(settings)
    total = sum(weights.values())

    names = list(weights)

    def validate(verdict: RubricVerdict) -> str | None:
        scores = criterion_scores(verdict.scores, names)
        missing = [c for c in weights if c not in scores]
        if missing:
            return f"the verdict has no score for criteria {missing}; score every criterion by its exact name"
        off = {c: s for c, s in scores.items() if not 0.0 <= s <= 100.0}
        if off:
            return f"criterion scores must be 0-100, got {off}"
        return None

    def score(verdict: RubricVerdict) -> float:
        scores = criterion_scores(verdict.scores, names)
        return sum(scores[c] * w for c, w in weights.items()) / total

    def checks(verdict: RubricVerdict) -> list[Check]:
        cut = threshold * 100
        scores = criterion_scores(verdict.scores, names)
        return [Check(c, scores[c] >= cut, f"{scores[c]:g}/100 (weight {w:g})") for c, w in weights.items()]

    check_text("rubric", "instructions", instructions)
    check_text("rubric", "scoring_guide", scoring_guide)
    lines = [f"- {c} (weight {w:g}): {descriptions.get(c, 'as the name says')}" for c, w in weights.items()]
    template = prompts.RUBRIC if instructions is None else prompts.with_system(prompts.RUBRIC, instructions)
    calibration = prompts.HARSH if be_harsh else prompts.FAIR
    if scoring_guide is not None:
        calibration = prompts.guided(scoring_guide) + (" " + prompts.HARSH if be_harsh else "")
    return LLMJudge(
        template,
        JsonVerdict(
            RubricVerdict,
            score=score,
            min=0,
            max=100,
            validate=validate,
            checks=checks,
            on_conflict=on_conflict,
            hundred_point=lambda verdict: rubric_of_hundred(verdict, weights),
        ),
        name=name,
        model=model,
        threshold=_threshold("rubric", threshold),
        options={"criteria": "\n".join(lines), "harshness": calibration},
        **rest,
    )


@judge_factory(tier=TIER_LLM)
def faithfulness(
    sources: Sequence[str] | None = None,
    *,
    model: ModelRef = None,
    threshold: float = 0.8,
    name: str = "faithfulness",
    **settings: Unpack[JudgeSettings],
) -> LLMJudge:
    """Is every claim of the output supported by the retrieved sources? Score = supported fraction.

    Unsupported claims (hallucinations) are listed in ``metadata["issues"]``
    and as failed checks. A reply that lists no claims is not a verdict (the
    judge asks again, then ABSTAINs): an empty list would otherwise pass by default.

    Args:
        sources: The documents to check against; None uses the case's sources
            (a case with none gives ERROR).
        model: Judge model, spec string, or None for the configured one.
        threshold: Pass when at least this fraction of claims is supported (default 0.8).
        name: The judge's name in reports.
        **settings: Shared options (retries, samples, fallback_score, ...).
    """
    fixed = check_texts("faithfulness", "sources", sources) if sources is not None else None
    on_conflict, rest = split_settings(settings)

    def sources_of(context: Context) -> Sequence[str]:
        found = fixed if fixed is not None else list(context.sources)
        if not found:
            raise TemplateError("faithfulness needs sources: pass sources=[...] or record the case's sources")
        return found

    def validate(verdict: FaithfulnessVerdict) -> str | None:
        return None if verdict.claims else "the verdict lists no claims; list every factual claim of the response"

    def score(verdict: FaithfulnessVerdict) -> float:
        return sum(c.supported for c in verdict.claims) / len(verdict.claims)

    def checks(verdict: FaithfulnessVerdict) -> list[Check]:
        return [
            Check(c.claim, c.supported, f"source {c.source}" if c.supported and c.source else "not in the sources")
            for c in verdict.claims
        ]

    judge = LLMJudge(
        prompts.FAITHFULNESS,
        JsonVerdict(FaithfulnessVerdict, score=score, validate=validate, checks=checks, on_conflict=on_conflict),
        name=name,
        model=model,
        threshold=_threshold("faithfulness", threshold),
        options={"sources": sources_of},
        reads=("sources",),
        **rest,
    )
    return judge


@judge_factory(tier=TIER_LLM)
def clarification(
    *,
    model: ModelRef = None,
    threshold: float = 0.5,
    name: str = "clarification",
    **settings: Unpack[JudgeSettings],
) -> LLMJudge:
    """Is the reply asking the user a question instead of answering? PASS means it is.

    Conversation runners use it to decide when to send a follow-up reply. The
    score is the model's probability that the reply is a clarifying question.

    Args:
        model: Judge model, spec string, or None for the configured one.
        threshold: PASS (a question) at this probability or above (default 0.5).
        name: The judge's name in reports.
        **settings: Shared options (retries, samples, fallback_score, ...).
    """
    on_conflict, rest = split_settings(settings)
    return LLMJudge(
        prompts.CLARIFICATION,
        JsonVerdict(ClarificationVerdict, score=_probability("asks_question"), on_conflict=on_conflict),
        name=name,
        model=model,
        threshold=_threshold("clarification", threshold),
        **{"conversation": False, **rest},  # the detector asks about this reply, as the runner did before
    )


@functools.lru_cache(maxsize=64)
def _score_reader(on_conflict: OnConflict, threshold: float) -> JsonVerdict[ScoreVerdict]:
    """The 0..1 score reader passing at ``threshold``, one per (on_conflict, threshold): a suite's 10,000
    correctness judges share it instead of each building and copying its own. A JsonVerdict keeps no state
    between replies and nothing changes it after it is built (``with_threshold`` copies), so sharing is safe.

    ``on_conflict`` is one of split_settings' two values and ``threshold`` is checked by ``_threshold`` first.
    """
    return JsonVerdict(ScoreVerdict, on_conflict=on_conflict, hundred_point=score_of_hundred, threshold=threshold)


def _threshold(judge: str, threshold: float) -> float:
    check_unit(judge, "threshold", threshold)
    return float(threshold)


def _probability(field: str) -> Callable[[RelevanceVerdict | ClarificationVerdict], float]:
    def probability(verdict: RelevanceVerdict | ClarificationVerdict) -> float:
        yes = bool(getattr(verdict, field))
        return verdict.confidence if yes else 1.0 - verdict.confidence

    return probability


def _query_of(query: str | None) -> Callable[[Context], str]:
    def read(context: Context) -> str:
        text = query if query is not None else context.input
        if not text.strip():
            raise TemplateError("no query: pass query=... or give the case an input")
        return text

    return read


def _results_options(
    judge: str, criteria: str | None, query: str | None, where: str, max_results: int, max_chars: int
) -> dict[str, Value]:
    """The template options of a judge of retrieved results (``relevance``, ``ranking``), checked.

    The query, the relevance criteria, the results (the first ``max_results``, each cut to
    ``max_chars``) and how many of how many are shown.
    """
    check_text(judge, "criteria", criteria)
    check_text(judge, "query", query)
    check_positive_int(judge, "max_results", max_results)
    check_positive_int(judge, "max_chars", max_chars)
    pick, shown = _results_reader(judge, where, max_results, max_chars)
    return {"query": _query_of(query), "criteria": criteria or GENERAL_RELEVANCE, "results": pick, "shown": shown}


def _results_reader(
    judge: str, where: str, max_results: int, max_chars: int
) -> tuple[Callable[[Context], list[str]], Callable[[Context], str]]:
    if where not in _RESULTS_FROM:
        raise ValueError(f"{judge}: results must be one of {', '.join(_RESULTS_FROM)}, got {where!r}")

    def every(context: Context) -> list[str]:
        if where == "sources" or (where == "auto" and context.sources):
            return list(context.sources)
        if where == "tool_results":
            return [
                r if isinstance(r, str) else json.dumps(r, ensure_ascii=False, default=str)
                for r in (call.result for call in context.tool_calls)
                if r is not None
            ]
        return [context.output] if context.output.strip() else []

    def pick(context: Context) -> list[str]:
        found = every(context)
        if not found:
            raise TemplateError(f"{judge}: the case has no results to judge (looked in {where})")
        return [_truncate(text, max_chars) for text in found[:max_results]]

    def shown(context: Context) -> str:
        count = len(every(context))
        return f"{min(count, max_results)} of {count}" if count > max_results else f"{count}"

    return pick, shown


def _results_reads(where: str) -> tuple[str, ...]:
    """The parts of a Context a results judge reads its results from (for ``LLMJudge.sees``)."""
    found = {"sources": ("sources",), "output": ("output",), "tool_results": ("tool_calls",)}
    return ("input", *found.get(where, ("sources", "output")))  # the query is the input unless given


def _truncate(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit] + f" [... truncated, {len(text) - limit} more characters]"


def _weights(criteria: Mapping[str, float] | Sequence[str]) -> dict[str, float]:
    if isinstance(criteria, Mapping):
        weights: dict[str, float] = {}
        for key, weight in criteria.items():
            if not isinstance(key, str) or not key.strip():
                raise ValueError(f"rubric: criterion names must be non-empty strings, got {key!r}")
            if isinstance(weight, bool) or not isinstance(weight, int | float) or weight <= 0:
                raise ValueError(f"rubric: weight of {key!r} must be a number > 0, got {weight!r}")
            weights[key] = float(weight)
        if not weights:
            raise ValueError("rubric: criteria must not be empty")
        return weights
    names = check_texts("rubric", "criteria", criteria)
    if len(set(names)) != len(names):
        raise ValueError(f"rubric: criteria must be distinct, got {names!r}")
    return dict.fromkeys(names, 1.0)
