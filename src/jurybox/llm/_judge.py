"""LLMJudge: template -> model -> classifier, with retries, failure policy and self-consistency."""

from __future__ import annotations

import asyncio
import contextlib
import statistics
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from jurybox.core import TIER_LLM, CategoricalScore, Context, Judgment, NumericScore, Status, error_reason
from jurybox.llm._classifiers import Classifier, with_threshold
from jurybox.llm._model import ModelRef, resolve
from jurybox.llm._planted import Material, data_blocks
from jurybox.llm._preface import CONVERSATION_CHARS, judge_prompt, what_it_sees
from jurybox.llm._reading import read_verdict
from jurybox.llm._template import Template, TemplateError, Value
from jurybox.models import ChatMessage, GenerateRequest, JudgeModel, ModelResponse

OnParseFailure = Literal["abstain", "error"]
#: Temperature used for self-consistency samples when none is given: a vote among
#: identical temperature-0 replies would measure nothing.
SAMPLING_TEMPERATURE = 0.7


@dataclass
class _Tally:
    """What every model call of one judgment cost, summed over attempts."""

    attempts: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    tokens_known: bool = True
    cost: float | None = 0.0
    latency: float = 0.0
    cached: bool = True
    model: str = ""
    replies: list[str] = field(default_factory=list)

    def add(self, response: ModelResponse, fallback_name: str) -> None:
        self.attempts += 1
        self.model = response.model or fallback_name
        usage = response.usage
        if usage.input_tokens is None and usage.output_tokens is None:
            self.tokens_known = False
        self.input_tokens += usage.input_tokens or 0
        self.output_tokens += usage.output_tokens or 0
        # An unknown price makes the total unknown: reporting a partial sum would understate spend.
        self.cost = None if self.cost is None or response.cost is None else self.cost + response.cost
        self.latency += response.latency
        self.cached = self.cached and response.cached
        self.replies.append(response.text)

    def metadata(self) -> dict[str, Any]:
        tokens = (
            {"input": self.input_tokens, "output": self.output_tokens, "total": self.input_tokens + self.output_tokens}
            if self.tokens_known and self.attempts
            else None
        )
        return {
            "model": self.model,
            "attempts": self.attempts,
            "tokens": tokens,
            "cost": self.cost if self.attempts else None,
            "latency": self.latency,
            "cached": self.cached and self.attempts > 0,
            "raw": self.replies[-1] if self.replies else None,
            "raw_replies": list(self.replies),
        }


class LLMJudge:
    """A model-backed judge: render a template, ask a model, classify the reply.

    Each part is replaceable: pass any Template, any JudgeModel (or spec
    string) and any classifier (Choice, Rating, JsonVerdict or your own with
    ``classify``, ``threshold``, ``format_hint`` and ``json_schema``).

    Failure semantics (never a silent pass or number):

    * a reply with no readable verdict is sent back to the model with the
      reason, up to ``retries`` times; then the judgment is ABSTAIN (or ERROR
      with ``on_parse_failure="error"``) with the reason and every raw reply;
    * a provider failure (any exception, including ModelError), a missing
      model configuration or a template variable the case lacks is ERROR;
    * ``fallback_score`` (e.g. 0.5) turns those into a score, only when asked,
      and marks the judgment ``degraded=True``.

    Args:
        template: The prompt (a Template, or a user-message string).
        classifier: Turns the reply text into a Judgment.
        name: The judge's name in reports.
        model: A JudgeModel, a spec such as ``"openai:gpt-4o-mini"``, or None
            for the configured judge model (resolved at call time).
        threshold: Overrides the classifier's pass threshold (0..1).
        options: Extra template variables: text, a list of texts, or a
            function of the Context.
        retries: Extra attempts after an unreadable reply (default 2).
        on_parse_failure: ``"abstain"`` (default) or ``"error"``.
        fallback_score: Neutral score to use when no verdict is reached; marks the judgment degraded.
        samples: Self-consistency: ask this many times and vote.
        temperature: Sampling temperature; default 0, or 0.7 when ``samples > 1``.
        max_tokens: Reply length limit passed to the model.
        seed: Passed to the model (sample ``i`` gets ``seed + i``).
        conversation: Show the earlier turns of the conversation (a later round's judge needs
            them), fenced as untrusted data before the prompt; only when there are some.
        conversation_chars: At most this many characters of earlier turns, the newest kept.
        use_lessons: Show the lessons the runner handed the case (``Context.lessons``), fenced
            as untrusted data; off by default, since they change the prompt.
        reads: Parts of the Context the ``options`` functions read (``sources``, ``tool_calls``...),
            for ``sees``.
    """

    kind = "llm"
    tier = TIER_LLM

    def __init__(
        self,
        template: Template | str,
        classifier: Classifier,
        *,
        name: str = "llm_judge",
        model: ModelRef = None,
        threshold: float | None = None,
        options: Mapping[str, Value] | None = None,
        retries: int = 2,
        on_parse_failure: OnParseFailure = "abstain",
        fallback_score: float | None = None,
        samples: int = 1,
        temperature: float | None = None,
        max_tokens: int | None = None,
        seed: int | None = None,
        conversation: bool = True,
        conversation_chars: int = CONVERSATION_CHARS,
        use_lessons: bool = False,
        reads: Sequence[str] = (),
    ) -> None:
        self.template = template if isinstance(template, Template) else Template(user=template)
        self.options: dict[str, Value] = dict(options or {})
        self.template.check(self.options)
        if not callable(getattr(classifier, "classify", None)):
            raise TypeError(f"classifier must have a classify(text) method, got {classifier!r}")
        missing = [a for a in ("threshold", "format_hint", "json_schema") if not hasattr(classifier, a)]
        if missing:
            raise TypeError(f"classifier {classifier!r} lacks attribute(s) {missing} (see jurybox.llm.Classifier)")
        self.classifier = with_threshold(classifier, threshold) if threshold is not None else classifier
        if not isinstance(name, str) or not name:
            raise ValueError(f"judge name must be a non-empty string, got {name!r}")
        if isinstance(retries, bool) or not isinstance(retries, int) or retries < 0:
            raise ValueError(f"retries must be a whole number >= 0, got {retries!r}")
        if on_parse_failure not in ("abstain", "error"):
            raise ValueError(f"on_parse_failure must be 'abstain' or 'error', got {on_parse_failure!r}")
        if fallback_score is not None and (
            isinstance(fallback_score, bool)
            or not isinstance(fallback_score, int | float)
            or not 0.0 <= fallback_score <= 1.0
        ):
            raise ValueError(f"fallback_score must be a number in 0..1 or None, got {fallback_score!r}")
        if isinstance(samples, bool) or not isinstance(samples, int) or samples < 1:
            raise ValueError(f"samples must be a whole number >= 1, got {samples!r}")
        if temperature is None:
            temperature = SAMPLING_TEMPERATURE if samples > 1 else 0.0
        if isinstance(temperature, bool) or not isinstance(temperature, int | float) or temperature < 0:
            raise ValueError(f"temperature must be a number >= 0, got {temperature!r}")
        if samples > 1 and temperature == 0:
            raise ValueError("self-consistency needs temperature > 0: identical samples cannot disagree")
        self.name = name
        self.model = model
        self.retries = retries
        self.on_parse_failure = on_parse_failure
        self.fallback_score = fallback_score
        self.samples = samples
        self.temperature = float(temperature)
        self.max_tokens = max_tokens
        self.seed = seed
        for option, flag in (("conversation", conversation), ("use_lessons", use_lessons)):
            if not isinstance(flag, bool):
                raise ValueError(f"{option} must be true or false, got {flag!r}")
        if isinstance(conversation_chars, bool) or not isinstance(conversation_chars, int) or conversation_chars < 1:
            raise ValueError(f"conversation_chars must be a whole number >= 1, got {conversation_chars!r}")
        self.conversation = conversation
        self.conversation_chars = conversation_chars
        self.use_lessons = use_lessons
        self.sees = what_it_sees(self.template, reads, conversation=conversation, use_lessons=use_lessons)
        """The parts of a Context this judge's prompt holds (``input``, ``output``, ``conversation``,
        ``tool_calls``, ``sources``, ``lessons``...); everything else in the trace it never sees."""

    @property
    def threshold(self) -> float:
        return float(self.classifier.threshold)

    @property
    def min_calls(self) -> int:
        """Model calls one verdict takes when every reply is readable: one per sample."""
        return self.samples

    @property
    def max_calls(self) -> int:
        """Model calls one verdict can take: each sample, asked again up to ``retries`` times when unreadable."""
        return self.samples * (self.retries + 1)

    async def __call__(self, context: Context) -> Judgment:
        judgment = await self._judge(context)
        return self.apply_fallback(judgment).named(self.name)

    async def _judge(self, context: Context) -> Judgment:
        try:
            model = resolve(self.model)
        except Exception as exc:
            return Judgment.errored(f"cannot get the judge model: {exc}", exception=exc)
        template, options = judge_prompt(
            self.template,
            self.options,
            context,
            conversation=self.conversation,
            conversation_chars=self.conversation_chars,
            use_lessons=self.use_lessons,
        )
        try:
            messages, data = template.render_with_data(context, options)
        except TemplateError as exc:
            return Judgment.errored(
                f"cannot build the judge prompt: {exc}", exception=exc, metadata={"model": model.name}
            )
        return await self.ask(model, messages, data=[(block.label, block.text) for block in data])

    async def ask(
        self, model: JudgeModel, messages: Sequence[ChatMessage], *, data: Sequence[tuple[str, str]] | None = None
    ) -> Judgment:
        """Classify the model's reply to ``messages``: one chain, or ``samples`` chains and a vote.

        ``data`` is the untrusted text the prompt holds, as (label, text); None reads it back
        from the prompt's data blocks. A passing verdict it states itself is not accepted.
        """
        material = Material(data_blocks(messages) if data is None else data)
        if self.samples == 1:
            return await self._chain(model, messages, self.seed, material)
        seeds = [None if self.seed is None else self.seed + i for i in range(self.samples)]
        runs = await asyncio.gather(*(self._chain(model, messages, seed, material) for seed in seeds))
        return _vote(runs, self.threshold)

    async def _chain(
        self, model: JudgeModel, messages: Sequence[ChatMessage], seed: int | None, material: Material
    ) -> Judgment:
        """Ask, and ask again with the reason while the reply holds no readable verdict."""
        tally = _Tally(model=model.name)
        conversation = list(messages)
        last: Judgment | None = None
        replies: list[ModelResponse] = []
        for _ in range(self.retries + 1):
            try:
                request = GenerateRequest(
                    tuple(conversation), self.temperature, self.max_tokens, self.classifier.json_schema, seed
                )
                response = await model.complete(request)
            except Exception as exc:
                # One line a person can act on; the exception itself stays in the judgment's error.
                reason = f"judge model {model.name} failed: {error_reason(exc)}"
                return Judgment.errored(reason, exception=exc, metadata=tally.metadata(), judge=self.name)
            tally.add(response, model.name)
            replies.append(response)
            try:
                last = read_verdict(self.classifier, response.text, material, cut=response.finish_reason == "length")
            except Exception as exc:  # a custom classifier's bug must not crash the run or pass
                reason = f"classifier {self.classifier!r} failed: {type(exc).__name__}: {exc}"
                return Judgment.errored(reason, exception=exc, metadata=tally.metadata(), judge=self.name)
            if "planted_in" in last.metadata:
                # Asking again would only repeat the echo: the reply is not a verdict, and that is final.
                return last.with_changes(metadata={**last.metadata, **tally.metadata()}, judge=self.name)
            if last.status is not Status.ABSTAIN:
                # One copy that also names the judgment: dataclass replace is a real share of a cached call.
                return last.with_changes(metadata={**last.metadata, **tally.metadata()}, judge=self.name)
            problem = str(last.metadata.get("parse_error") or last.reasoning)
            if response.finish_reason == "length":
                problem += " (the reply was cut off at the token limit)"
            conversation += [
                ChatMessage("assistant", response.text),
                ChatMessage(
                    "user",
                    f"Your reply could not be graded: {problem}. Reply again and give {self.classifier.format_hint}.",
                ),
            ]
        assert last is not None  # the loop runs at least once
        _forget(model, replies)
        problem = str(last.metadata.get("parse_error") or last.reasoning)
        reason = f"no readable verdict after {tally.attempts} attempt(s): {problem}"
        metadata = {**last.metadata, **tally.metadata()}
        if self.on_parse_failure == "error":
            return Judgment.errored(reason, metadata=metadata, judge=self.name)
        return Judgment.abstained(reason, metadata=metadata, judge=self.name)

    def apply_fallback(self, judgment: Judgment) -> Judgment:
        """``judgment`` as is, or, when it is undecided and a ``fallback_score`` is set, that score marked degraded."""
        if judgment.status.decided or self.fallback_score is None:
            return judgment
        score = NumericScore(float(self.fallback_score))
        status = Status.PASS if score.value >= self.threshold else Status.FAIL
        return judgment.with_changes(
            status=status,
            score=score,
            degraded=True,
            reasoning=f"degraded: neutral score {score.value:g} used because the judge could not decide "
            f"({judgment.status.value}: {judgment.reasoning})",
            metadata={**judgment.metadata, "undecided_status": judgment.status.value},
        )

    def __repr__(self) -> str:
        model = self.model if isinstance(self.model, str | None) else getattr(self.model, "name", self.model)
        return f"<llm judge {self.name} model={model!r} threshold={self.threshold:g}>"


def _forget(model: JudgeModel, replies: Sequence[ModelResponse]) -> None:
    """Take unreadable replies out of the model's response cache, so the next run asks again.

    Kept, a reply at temperature 0 would be replayed on every run and the judge could never
    reach a verdict until someone cleared the cache. Models without a cache have no ``forget``.
    """
    forget = getattr(model, "forget", None)
    if not callable(forget):
        return
    for reply in replies:
        with contextlib.suppress(Exception):  # the cache is an optimisation: failing to trim it is harmless
            forget(reply)


def _vote(runs: Sequence[Judgment], threshold: float) -> Judgment:
    """Combine self-consistency samples: majority label, or median score; carry the agreement."""
    children = {f"sample_{i}": run for i, run in enumerate(runs, start=1)}
    decided = [run for run in runs if run.status.decided]
    total = len(runs)
    # Samples that gave no verdict stay named in the result, not only folded into the agreement.
    undecided = {name: run.status.value for name, run in children.items() if not run.status.decided}
    common: dict[str, Any] = {
        "samples": total,
        "decided": len(decided),
        "undecided_samples": undecided,
        "votes": [_vote_key(r) for r in runs],
        **combined_usage(runs),
    }
    if len(decided) * 2 <= total:
        statuses = Counter(run.status.value for run in runs)
        reason = f"only {len(decided)} of {total} samples gave a verdict ({dict(statuses)})"
        if not decided and all(run.status is Status.ERROR for run in runs):
            return Judgment.errored(reason, children=children, metadata=common)
        return Judgment.abstained(reason, children=children, metadata=common)
    labels = [run.metadata.get("label") for run in decided]
    if all(isinstance(label, str) for label in labels) and isinstance(decided[0].score, CategoricalScore):
        counts = Counter(str(label) for label in labels).most_common()
        if len(counts) > 1 and counts[0][1] == counts[1][1]:
            return Judgment.abstained(
                f"samples split evenly between labels {dict(counts)}", children=children, metadata=common
            )
        label, agreeing = counts[0]
        score: CategoricalScore | NumericScore = CategoricalScore(label, decided[0].score.categories)
        status = Status.PASS if score.normalized() >= threshold else Status.FAIL
        extra: dict[str, Any] = {"label": label}
    else:
        values = [run.value for run in decided if run.value is not None]
        if not values:
            return Judgment.abstained(
                "the samples' verdicts carry no score to vote on", children=children, metadata=common
            )
        median = statistics.median(values)
        score = NumericScore(median)
        status = Status.PASS if median >= threshold else Status.FAIL
        agreeing = sum(1 for run in decided if run.status is status)
        extra = {"value": median}
    agreement = agreeing / total
    confidences = [run.confidence for run in decided if run.confidence is not None]
    return Judgment(
        status,
        score=score,
        reasoning=f"{agreeing} of {total} samples agree ({_vote_key_text(extra)})"
        + (
            f"; {len(undecided)} gave no verdict ({', '.join(f'{n}: {s}' for n, s in undecided.items())})"
            if undecided
            else ""
        ),
        confidence=statistics.fmean(confidences) if confidences else agreement,
        degraded=any(run.degraded for run in decided),
        children=children,
        metadata={**common, **extra, "agreement": agreement},
    )


def combined_usage(runs: Sequence[Judgment]) -> dict[str, Any]:
    """Model, attempts, tokens, cost, latency and cached flag summed over several judged runs.

    Tokens and cost become None as soon as one run's are unknown: a partial sum would understate them.
    """
    tokens: dict[str, int] | None = {"input": 0, "output": 0, "total": 0}
    cost: float | None = 0.0
    latency = 0.0
    attempts = 0
    cached = bool(runs)
    model = ""
    for run in runs:
        meta = run.metadata
        model = model or str(meta.get("model") or "")
        attempts += int(meta.get("attempts") or 0)
        latency += float(meta.get("latency") or 0.0)
        cached = cached and bool(meta.get("cached"))
        part = meta.get("tokens")
        tokens = (
            None if tokens is None or not isinstance(part, Mapping) else {k: tokens[k] + int(part[k]) for k in tokens}
        )
        value = meta.get("cost")
        cost = None if cost is None or not isinstance(value, int | float) else cost + float(value)
    return {"model": model, "attempts": attempts, "tokens": tokens, "cost": cost, "latency": latency, "cached": cached}


def _vote_key(run: Judgment) -> str:
    label = run.metadata.get("label")
    if isinstance(label, str):
        return label
    return run.status.value if run.value is None else f"{run.status.value}:{run.value:.3g}"


def _vote_key_text(extra: Mapping[str, Any]) -> str:
    if "label" in extra:
        return f"label {extra['label']}"
    return f"median score {extra['value']:.3g}"
