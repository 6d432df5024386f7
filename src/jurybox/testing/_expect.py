"""``expect(...)``: fluent assertions about what an LLM app produced.

Each step runs one judge at once and returns the chain. A hard step that does
not pass raises ``JuryboxAssertionError`` with the judge's verdict, confidence
and reasoning; a soft ``warn_*`` step records a warning (shown in the pytest
terminal summary) and lets the test go on, unless strict mode is on. A verdict
under the confidence threshold is ``uncertain``, never a pass, and a judge that
could not decide (ERROR/ABSTAIN, no model configured) never passes either.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from jurybox.core import REPLY_SHOWN, Context, evaluate, judge_name
from jurybox.testing._errors import JudgeNotConfiguredError, JuryboxAssertionError, JuryboxWarning
from jurybox.testing._scope import (
    DEFAULT_CONFIDENCE,
    DEFAULT_SIMILARITY,
    HOW_TO_CONFIGURE,
    TestScope,
    current_scope,
    fallback_strict,
)
from jurybox.testing._seed_names import SeedStepNames
from jurybox.testing._verdict import Verdict

if TYPE_CHECKING:
    from jurybox.judges import ArgumentMode, MatchMode

#: How much of the judged output a failure message quotes.
QUOTE_LIMIT = 300
#: How much of each argument a failure's first line repeats (``is_relevant_to('refund policy')``).
ARGUMENT_LIMIT = 60


def _quote(text: str, limit: int = QUOTE_LIMIT) -> str:
    text = " ".join(text.split())
    return repr(text if len(text) <= limit else text[: limit - 1] + "…")


def _call_text(step: str, *arguments: Any) -> str:
    """The step as the test wrote it, arguments shortened: ``covers_topics('refunds', 'shipping')``."""
    shown = [
        _quote(value, ARGUMENT_LIMIT) if isinstance(value, str) else _short_repr(value)
        for value in arguments
        if value is not None
    ]
    return f"{step}({', '.join(shown)})"


def _short_repr(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= ARGUMENT_LIMIT else text[: ARGUMENT_LIMIT - 1] + "…"


def _as_context(output: Any, fields: Mapping[str, Any]) -> Context:
    """A Context from a string, a Context, or a reply object with ``text`` (and maybe ``tool_calls``/``sources``)."""
    if isinstance(output, Context):
        return output.replace(**fields) if fields else output
    if isinstance(output, str):
        return Context(output=output, **fields)
    text = getattr(output, "text", None)
    if isinstance(text, str):
        extra = {
            name: getattr(output, name)
            for name in ("tool_calls", "sources")
            if getattr(output, name, None) and name not in fields
        }
        return Context(output=text, **extra, **fields)
    raise TypeError(
        f"expect() takes the output as a string, a Context or a reply with a .text; got {type(output).__name__}"
    )


class Expectation(SeedStepNames):
    """A chain of checks on one output. Build it with ``expect(...)`` or ``expect.results(...)``.

    Attributes:
        context: What the judges see.
        verdicts: Every step's verdict so far, in order.
    """

    def __init__(self, context: Context, *, judge_model: Any = None, confidence: float | None = None) -> None:
        if confidence is not None and not 0.0 <= confidence <= 1.0:
            raise ValueError(f"confidence threshold must be in 0..1, got {confidence!r}")
        self.context = context
        self.verdicts: list[Verdict] = []
        self._judge_model = judge_model
        self._confidence = confidence

    # -- settings ----------------------------------------------------------------
    @property
    def _scope(self) -> TestScope | None:
        return current_scope()

    @property
    def confidence_threshold(self) -> float:
        if self._confidence is not None:
            return self._confidence
        scope = self._scope
        return scope.confidence if scope is not None else DEFAULT_CONFIDENCE

    @property
    def strict(self) -> bool:
        scope = self._scope
        return scope.strict if scope is not None else fallback_strict()

    def _model(self) -> Any:
        """The judge model for semantic steps, or None when none is configured anywhere."""
        if self._judge_model is not None:
            return self._judge_model
        scope = self._scope
        if scope is not None:
            return scope.configured_model()
        # Outside pytest: the environment, as jurybox.llm resolves it.
        return os.environ.get("JURYBOX_JUDGE_MODEL") or None

    # -- the engine ---------------------------------------------------------------
    # Every frame of this class carries ``__tracebackhide__``: a failed step's traceback in
    # pytest ends at the test's own line, and the message says the rest.
    def _check(self, step: str, judge: Any, *, soft: bool, wanted: str | None = None) -> Expectation:
        __tracebackhide__ = True
        judgment = evaluate(judge, self.context)
        verdict = Verdict.from_judgment(step, judgment, confidence_threshold=self.confidence_threshold, soft=soft)
        return self._settle(verdict, wanted=wanted)

    def _semantic(
        self, step: str, factory_name: str, *args: Any, soft: bool, wanted: str | None = None, **options: Any
    ) -> Expectation:
        __tracebackhide__ = True
        model = self._model()
        if model is None:
            verdict = Verdict(
                step=step,
                judge=factory_name,
                outcome="error",
                confidence=None,
                confidence_threshold=self.confidence_threshold,
                reasoning=f"no judge model configured: {HOW_TO_CONFIGURE}",
                soft=soft,
            )
            return self._settle(verdict, error=JudgeNotConfiguredError, wanted=wanted)
        from jurybox import llm

        judge = getattr(llm, factory_name)(*args, model=model, **options)
        return self._check(step, judge, soft=soft, wanted=wanted)

    def _settle(
        self,
        verdict: Verdict,
        error: type[JuryboxAssertionError] = JuryboxAssertionError,
        *,
        wanted: str | None = None,
    ) -> Expectation:
        __tracebackhide__ = True
        self.verdicts.append(verdict)
        scope = self._scope
        if scope is not None:
            scope.record_verdict(verdict)
        if verdict.ok:
            return self
        if verdict.soft and not self.strict:
            if scope is None:
                warnings.warn(f"jurybox soft check: {verdict.describe()}", JuryboxWarning, stacklevel=4)
            return self
        # The first line is the point: what the test asked for and what the judge answered.
        strict = " (soft check, strict mode)" if verdict.soft else ""
        # An undecided judge's own words: why it could not decide is usually plain to see in them.
        replied = f"\n  judge replied: {_quote(verdict.reply, REPLY_SHOWN)}" if verdict.reply is not None else ""
        raise error(
            f"{wanted or verdict.step} failed{strict}: {verdict.said()}\n  output: {_quote(self.context.output)}"
            + replied
        )

    # -- semantic steps (LLM judges) -----------------------------------------------
    def _relevance(self, step: str, criteria: str, soft: bool, options: dict[str, Any]) -> Expectation:
        __tracebackhide__ = True
        wanted = _call_text(step, criteria)
        if self.context.input.strip():
            return self._semantic(step, "relevance", criteria, soft=soft, wanted=wanted, **options)
        # No query on the chain: the output is judged against the criteria as the query.
        return self._semantic(step, "relevance", soft=soft, wanted=wanted, query=criteria, **options)

    def is_relevant_to(self, criteria: str, **options: Any) -> Expectation:
        """Hard: the output (or the results) is relevant to ``criteria`` (``jurybox.llm.relevance``)."""
        __tracebackhide__ = True
        return self._relevance("is_relevant_to", criteria, False, options)

    def warn_if_irrelevant(self, criteria: str, **options: Any) -> Expectation:
        """Soft ``is_relevant_to``: warn in the summary instead of failing."""
        __tracebackhide__ = True
        return self._relevance("warn_if_irrelevant", criteria, True, options)

    def _ranking(self, step: str, criteria: str | None, soft: bool, options: dict[str, Any]) -> Expectation:
        __tracebackhide__ = True
        return self._semantic(step, "ranking", criteria, soft=soft, wanted=_call_text(step, criteria), **options)

    def has_good_ranking(self, criteria: str | None = None, **options: Any) -> Expectation:
        """Hard: the most relevant results come first (``jurybox.llm.ranking``)."""
        __tracebackhide__ = True
        return self._ranking("has_good_ranking", criteria, False, options)

    def warn_if_poorly_ranked(self, criteria: str | None = None, **options: Any) -> Expectation:
        """Soft ``has_good_ranking``."""
        __tracebackhide__ = True
        return self._ranking("warn_if_poorly_ranked", criteria, True, options)

    def _coverage(self, step: str, topics: tuple[str, ...], soft: bool, options: dict[str, Any]) -> Expectation:
        __tracebackhide__ = True
        wanted = _call_text(step, *topics)
        return self._semantic(step, "coverage", list(topics), soft=soft, wanted=wanted, **options)

    def covers_topics(self, *topics: str, **options: Any) -> Expectation:
        """Hard: the output covers every topic (``jurybox.llm.coverage``; ``threshold=`` for a fraction)."""
        __tracebackhide__ = True
        return self._coverage("covers_topics", topics, False, options)

    def warn_if_missing_topics(self, *topics: str, **options: Any) -> Expectation:
        """Soft ``covers_topics``."""
        __tracebackhide__ = True
        return self._coverage("warn_if_missing_topics", topics, True, options)

    def _correctness(self, step: str, reference: str | None, soft: bool, options: dict[str, Any]) -> Expectation:
        __tracebackhide__ = True
        wanted = _call_text(step, reference)
        return self._semantic(step, "correctness", reference, soft=soft, wanted=wanted, **options)

    def is_correct(self, reference: str | None = None, **options: Any) -> Expectation:
        """Hard: the output is correct against ``reference`` (``jurybox.llm.correctness``)."""
        __tracebackhide__ = True
        return self._correctness("is_correct", reference, False, options)

    def warn_if_incorrect(self, reference: str | None = None, **options: Any) -> Expectation:
        """Soft ``is_correct``."""
        __tracebackhide__ = True
        return self._correctness("warn_if_incorrect", reference, True, options)

    def _rubric(
        self, step: str, rubric: str | Sequence[str] | Mapping[str, float], soft: bool, options: dict[str, Any]
    ) -> Expectation:
        __tracebackhide__ = True
        criteria = [rubric] if isinstance(rubric, str) else rubric
        return self._semantic(step, "rubric", criteria, soft=soft, wanted=_call_text(step, rubric), **options)

    def meets(self, rubric: str | Sequence[str] | Mapping[str, float], **options: Any) -> Expectation:
        """Hard: the output meets a rubric -- one criterion, a list, or criterion -> weight (``jurybox.llm.rubric``)."""
        __tracebackhide__ = True
        return self._rubric("meets", rubric, False, options)

    def warn_if_fails_rubric(self, rubric: str | Sequence[str] | Mapping[str, float], **options: Any) -> Expectation:
        """Soft ``meets``."""
        __tracebackhide__ = True
        return self._rubric("warn_if_fails_rubric", rubric, True, options)

    def _faithfulness(
        self, step: str, sources: Sequence[str] | None, soft: bool, options: dict[str, Any]
    ) -> Expectation:
        __tracebackhide__ = True
        wanted = _call_text(step, sources)
        return self._semantic(step, "faithfulness", _texts(sources), soft=soft, wanted=wanted, **options)

    def is_faithful_to(self, sources: Sequence[str] | None = None, **options: Any) -> Expectation:
        """Hard: every claim is supported by ``sources`` (default: the context's; ``jurybox.llm.faithfulness``)."""
        __tracebackhide__ = True
        return self._faithfulness("is_faithful_to", sources, False, options)

    def warn_if_unfaithful(self, sources: Sequence[str] | None = None, **options: Any) -> Expectation:
        """Soft ``is_faithful_to``."""
        __tracebackhide__ = True
        return self._faithfulness("warn_if_unfaithful", sources, True, options)

    # -- structural steps (deterministic judges) ----------------------------------
    def _similarity_default(self) -> float:
        scope = self._scope
        return scope.similarity_threshold if scope is not None else DEFAULT_SIMILARITY

    def _similar(self, step: str, recorded: str, threshold: float | None, soft: bool) -> Expectation:
        __tracebackhide__ = True
        from jurybox.judges import similar

        limit = self._similarity_default() if threshold is None else threshold
        wanted = f"{_call_text(step, recorded)[:-1]}, threshold={limit:g})"
        return self._check(step, similar(recorded, threshold=limit), soft=soft, wanted=wanted)

    def is_similar_to(self, recorded: str, threshold: float | None = None) -> Expectation:
        """Hard: text similarity (difflib ratio) to ``recorded`` is at least ``threshold``.

        The default threshold is 0.85, ``[tool.jurybox] similarity_threshold``, or the
        test's ``@pytest.mark.similarity_threshold(x)``.
        """
        __tracebackhide__ = True
        return self._similar("is_similar_to", recorded, threshold, False)

    def warn_if_dissimilar(self, recorded: str, threshold: float | None = None) -> Expectation:
        """Soft ``is_similar_to``."""
        __tracebackhide__ = True
        return self._similar("warn_if_dissimilar", recorded, threshold, True)

    def called_tools(
        self,
        expected: Sequence[Any],
        *,
        mode: MatchMode = "strict",
        args: ArgumentMode = "exact",
        per_tool: Mapping[str, ArgumentMode] | None = None,
    ) -> Expectation:
        """Hard, always: the tool calls match ``expected`` (names, or dicts with ``name``/``arguments``).

        Exact by default (same calls, same order, same arguments): tool calls are
        actions, so they are never compared softly. ``mode`` and ``args`` are
        those of ``jurybox.judges.tool_calls``.
        """
        __tracebackhide__ = True
        from jurybox.judges import tool_calls

        judge = tool_calls(list(expected), mode=mode, args=args, per_tool=per_tool)
        return self._check("called_tools", judge, soft=False, wanted=_call_text("called_tools", list(expected)))

    def matches_schema(self, schema: Mapping[str, Any]) -> Expectation:
        """Hard: the output is JSON valid against the JSON Schema ``schema``."""
        __tracebackhide__ = True
        from jurybox.judges import json_schema

        return self._check("matches_schema", json_schema(schema), soft=False, wanted="matches_schema(...)")

    # -- any judge ----------------------------------------------------------------
    def satisfies(self, judge: Any) -> Expectation:
        """Hard: any judge (from ``jurybox.judges``, ``jurybox.llm``, a ``@judge`` function, a Jury...) passes."""
        __tracebackhide__ = True
        return self._check(f"satisfies({judge_name(judge)})", judge, soft=False)

    def warn_unless(self, judge: Any) -> Expectation:
        """Soft ``satisfies``."""
        __tracebackhide__ = True
        return self._check(f"warn_unless({judge_name(judge)})", judge, soft=True)

    def __repr__(self) -> str:
        return f"<expect {_quote(self.context.output)}: {len(self.verdicts)} step(s)>"


def _texts(values: Sequence[str] | None) -> list[str] | None:
    if values is None:
        return None
    if isinstance(values, str):
        return [values]
    return list(values)


class Expect:
    """The ``expect`` entry point: ``expect(output)`` and ``expect.results(query, results)``."""

    def __call__(
        self,
        output: Any,
        *,
        judge_model: Any = None,
        query: str | None = None,
        expected: str | None = None,
        sources: Sequence[str] | None = None,
        tool_calls: Sequence[Any] | None = None,
        confidence: float | None = None,
    ) -> Expectation:
        """Start a chain on an output.

        Args:
            output: The text, a ``Context``, or a reply object with ``.text`` (and
                ``.tool_calls``/``.sources``, e.g. an ``AgentReply``).
            judge_model: A JudgeModel or spec string for the semantic steps; default:
                the configured judge model (``--jurybox-model``, ``JURYBOX_JUDGE_MODEL``,
                ``[tool.jurybox] model``, or the ``fake_model`` fixture's model).
            query: The question the output answers (relevance judges use it).
            expected: A reference answer (``is_correct()`` without argument uses it).
            sources: Retrieved documents (``is_faithful_to()`` without argument uses them).
            tool_calls: The calls the app made (``called_tools`` checks them).
            confidence: Confidence threshold for this chain (default 0.6 or the configured one).
        """
        fields: dict[str, Any] = {}
        if query is not None:
            fields["input"] = query
        if expected is not None:
            fields["expected"] = expected
        if sources is not None:
            fields["sources"] = _texts(sources)
        if tool_calls is not None:
            fields["tool_calls"] = list(tool_calls)
        return Expectation(_as_context(output, fields), judge_model=judge_model, confidence=confidence)

    def results(
        self,
        query: str,
        results: Sequence[str],
        *,
        judge_model: Any = None,
        confidence: float | None = None,
    ) -> Expectation:
        """Start a chain on retrieval or search results for ``query`` (ranked, best first)."""
        if isinstance(results, str):
            raise TypeError("expect.results() takes a list of result texts, not one string")
        texts = [str(result) for result in results]
        context = Context(input=query, output="\n\n".join(texts), sources=tuple(texts))
        return Expectation(context, judge_model=judge_model, confidence=confidence)


expect = Expect()
