"""The judge contract: any callable ``(Context) -> Judgment``, sync or async."""

from __future__ import annotations

import functools
import inspect
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Protocol, TypeVar, overload, runtime_checkable

from jurybox.core._context import Context
from jurybox.core._judgment import Judgment, ScoreLike, Status
from jurybox.core._reasons import error_reason
from jurybox.core._scores import BooleanScore, CategoricalScore, NumericScore, normalize
from jurybox.core._sync import run_sync
from jurybox.core._threads import to_daemon_thread

JudgmentLike = Judgment | ScoreLike


@runtime_checkable
class Judge(Protocol):
    """Anything that can be called with a Context and returns a Judgment (or an awaitable of one).

    Plain functions, ``@judge`` functions, juries, cascades and the factories in
    ``jurybox.judges`` and ``jurybox.llm`` all fit. A judge may carry a ``name``;
    one that sets ``blocking = True`` (it waits on a process or disk) is run in
    a worker thread so it does not stall the other judges of a jury.
    """

    def __call__(self, context: Context, /) -> Judgment | Awaitable[Judgment]: ...


def judge_name(judge: Any) -> str:
    """The name a judge goes by in juries, cascades and reports."""
    name = getattr(judge, "name", None)
    if isinstance(name, str) and name:
        return name
    return getattr(judge, "__name__", None) or type(judge).__name__


def coerce_judgment(value: Any, name: str, threshold: float) -> Judgment:
    """Turn what a judge function returned into a Judgment.

    A bool is pass/fail; a number (or Score) passes at ``threshold`` or above
    once normalized to 0..1. A scorer's mapping ``{"score": 0.8, "message": "..."}``
    (the shape ``createScorer``-style functions return) is that score with the
    message as reasoning, and ``metadata`` kept. ``None`` and anything else is an
    ERROR, because a judge that forgot to return must not pass.
    """
    if isinstance(value, Judgment):
        return value.named(name)
    if isinstance(value, Mapping):
        return _scorer_result(value, name, threshold)
    if isinstance(value, bool):
        status = Status.PASS if value else Status.FAIL
        return Judgment(status, score=BooleanScore(value), judge=name)
    if isinstance(value, int | float | NumericScore | CategoricalScore | BooleanScore):
        try:
            normalized = normalize(value)
        except (ValueError, TypeError) as exc:
            return Judgment.errored(f"judge returned an invalid score: {exc}", exception=exc, judge=name)
        status = Status.PASS if normalized >= threshold else Status.FAIL
        score = value if not isinstance(value, int | float) else NumericScore(float(value))
        reasoning = f"score {normalized:.3g} {'>=' if status is Status.PASS else '<'} threshold {threshold:g}"
        return Judgment(status, score=score, reasoning=reasoning, judge=name)
    return Judgment.errored(
        f"judge returned {type(value).__name__} ({value!r:.80}); expected a Judgment, bool or score",
        judge=name,
    )


_SCORER_KEYS = ("score", "message", "reasoning", "reason", "metadata")


def _scorer_result(value: Mapping[Any, Any], name: str, threshold: float) -> Judgment:
    """``{"score": ..., "message": ...}`` as a Judgment; a mapping of any other shape is an ERROR naming it."""
    unknown = [key for key in value if key not in _SCORER_KEYS]
    if "score" not in value or unknown:
        problem = "no 'score'" if "score" not in value else f"unknown key(s) {', '.join(map(repr, unknown))}"
        return Judgment.errored(
            f"judge returned a mapping with {problem}; a scorer returns {{'score': 0..1, 'message': '...'}}",
            judge=name,
        )
    score = value["score"]
    if score is None or isinstance(score, Mapping):
        return Judgment.errored(f"judge returned score {score!r}; expected a bool or a number in 0..1", judge=name)
    judgment = coerce_judgment(score, name, threshold)
    texts = [value.get(key) for key in ("message", "reasoning", "reason")]
    message = next((text for text in texts if isinstance(text, str) and text), None)
    metadata = value.get("metadata")
    changes: dict[str, Any] = {}
    if message is not None and judgment.status.decided:
        changes["reasoning"] = message
    if isinstance(metadata, Mapping) and judgment.status.decided:
        changes["metadata"] = {**judgment.metadata, **metadata}
    return judgment.with_changes(**changes) if changes else judgment


class FunctionJudge:
    """A plain function made into a named judge by ``@judge``."""

    def __init__(self, fn: Callable[[Context], Any], name: str, threshold: float, blocking: bool) -> None:
        if not 0.0 <= threshold <= 1.0:
            raise ValueError(f"threshold for judge {name!r} must be in 0..1, got {threshold!r}")
        self.fn = fn
        self.name = name
        self.threshold = threshold
        self.blocking = blocking
        functools.update_wrapper(self, fn)

    async def __call__(self, context: Context) -> Judgment:
        try:
            if inspect.iscoroutinefunction(self.fn):
                value = await self.fn(context)
            elif self.blocking:
                value = await to_daemon_thread(self.fn, context)
            else:
                value = self.fn(context)
                if inspect.isawaitable(value):
                    value = await value
        except Exception as exc:
            return Judgment.errored(error_reason(exc), exception=exc, judge=self.name)
        return coerce_judgment(value, self.name, self.threshold)

    def __repr__(self) -> str:
        return f"<judge {self.name}>"


F = TypeVar("F", bound=Callable[..., Any])


@overload
def judge(fn: Callable[[Context], Any], /) -> FunctionJudge: ...


@overload
def judge(
    *, name: str | None = None, threshold: float = 0.5, blocking: bool = False
) -> Callable[[Callable[[Context], Any]], FunctionJudge]: ...


def judge(
    fn: Callable[[Context], Any] | None = None,
    /,
    *,
    name: str | None = None,
    threshold: float = 0.5,
    blocking: bool = False,
) -> FunctionJudge | Callable[[Callable[[Context], Any]], FunctionJudge]:
    """Make a plain function a judge.

    The function takes a Context and returns a bool, a score (a number in 0..1
    or a Score) or a Judgment. An exception becomes an ERROR judgment that keeps
    the exception; it never crashes the run and never passes.

    Args:
        fn: The function (when used as ``@judge`` without parentheses).
        name: The judge's name; defaults to the function's name.
        threshold: A numeric return passes at this value or above (0..1).
        blocking: Run the function in a worker thread (it does I/O).

    Example:
        >>> @judge
        ... def mentions_price(ctx: Context) -> bool:
        ...     return "$" in ctx.output
    """

    def wrap(function: Callable[[Context], Any]) -> FunctionJudge:
        return FunctionJudge(function, name or function.__name__, threshold, blocking)

    return wrap(fn) if fn is not None else wrap


async def aevaluate(judge: Any, context: Context) -> Judgment:
    """Run any judge from async code and return its Judgment.

    Whatever goes wrong inside the judge (an exception, a wrong return type)
    comes back as an ERROR judgment naming the judge; this function does not raise
    for judge failures.
    """
    name = judge_name(judge)
    try:
        if getattr(judge, "blocking", False) and not inspect.iscoroutinefunction(judge):
            result = await to_daemon_thread(judge, context)
        else:
            result = judge(context)
        if inspect.isawaitable(result):
            result = await result
    except Exception as exc:
        return Judgment.errored(error_reason(exc), exception=exc, judge=name)
    if not isinstance(result, Judgment):
        return Judgment.errored(
            f"judge returned {type(result).__name__} ({result!r:.80}); a judge must return a Judgment "
            "(wrap plain functions with @judge)",
            judge=name,
        )
    return result.named(name)


def evaluate(judge: Any, context: Context) -> Judgment:
    """Run any judge from sync code and return its Judgment.

    Works inside a running event loop too (a notebook): the judge then runs on
    a private loop in a helper thread.
    """
    return run_sync(functools.partial(aevaluate, judge, context), thread_name="jurybox-evaluate")
