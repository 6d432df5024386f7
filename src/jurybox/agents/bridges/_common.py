"""Helpers the bridges share: reading duck-typed objects and framework content shapes."""

from __future__ import annotations

import json
import time
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from typing import Any, Protocol

from jurybox.agents._chat import parse_arguments
from jurybox.core import Context, Judgment, Message, ToolCall, aevaluate, evaluate

_MISSING = object()


def get(obj: Any, name: str, default: Any = None) -> Any:
    """``obj.name`` or ``obj[name]``: frameworks hand out both objects and plain dicts."""
    if isinstance(obj, Mapping):
        return obj.get(name, default)
    value = getattr(obj, name, _MISSING)
    return default if value is _MISSING else value


def text_of(content: Any) -> str:
    """Text from a message content: a string, or a list of blocks (``{"type": "text", "text": ...}``)."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, Iterable) and not isinstance(content, bytes | Mapping):
        parts = []
        for block in content:
            if isinstance(block, str):
                parts.append(block)
            else:
                text = get(block, "text")
                if isinstance(text, str):
                    parts.append(text)
        return "".join(parts)
    text = get(content, "text")
    return text if isinstance(text, str) else str(content)


def arguments_of(value: Any) -> dict[str, Any]:
    """Tool-call arguments as a dict, from a dict or a JSON string (unparsable text kept under ``_raw_arguments``)."""
    if isinstance(value, Mapping):
        return dict(value)
    if value is None or isinstance(value, str):
        return parse_arguments(value)  # the chat client's parser: a JSON string is the OpenAI wire form
    return {"_raw_arguments": repr(value)}


def output_text(value: Any) -> str:
    """A final output as text: strings as they are, models and dicts as JSON."""
    if isinstance(value, str):
        return value
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        value = dump(mode="json")
    try:
        return json.dumps(value, sort_keys=True, default=str)
    except TypeError:
        return str(value)


def add_usage(total: dict[str, int], usage: Any) -> None:
    """Add a usage object's token counts (several naming schemes) to ``total``."""
    if usage is None:
        return
    for key, names in (
        ("input_tokens", ("input_tokens", "prompt_tokens", "request_tokens")),
        ("output_tokens", ("output_tokens", "completion_tokens", "response_tokens")),
    ):
        for name in names:
            value = get(usage, name)
            if isinstance(value, int) and not isinstance(value, bool):
                total[key] = total.get(key, 0) + value
                break


def agent_run_context(
    *,
    prompt: str,
    output: str,
    expected: str | None,
    messages: Iterable[Message],
    calls: Iterable[Mapping[str, Any]],
    results: Mapping[Any, Any],
    sources: Iterable[str],
    duration: float | None,
    metadata: dict[str, Any],
    usage: Mapping[str, int],
) -> Context:
    """The Context of one framework run: tool calls joined with their results by call id, usage summed."""
    if usage:
        metadata["usage"] = dict(usage)
        metadata["tokens"] = sum(usage.values())
    return Context(
        input=prompt,
        output=output,
        expected=expected,
        messages=tuple(messages),
        tool_calls=tuple(
            ToolCall(name=str(c["name"]), arguments=c["arguments"], result=results.get(c["id"]), id=c["id"])
            for c in calls
        ),
        sources=tuple(sources),
        duration=duration,
        metadata=metadata,
    )


class AsyncEvaluator(Protocol):
    """``aevaluate_<framework>(target, prompt, judge, ...)``: one run of the framework, judged."""

    async def __call__(
        self,
        target: Any,
        prompt: str,
        judge: Any,
        *,
        expected: str | None = None,
        sources: Sequence[str] = (),
        **options: Any,
    ) -> Judgment: ...


class SyncEvaluator(Protocol):
    """``evaluate_<framework>(target, prompt, judge, ...)``: the same from sync code."""

    def __call__(
        self,
        target: Any,
        prompt: str,
        judge: Any,
        *,
        expected: str | None = None,
        sources: Sequence[str] = (),
        **options: Any,
    ) -> Judgment: ...


ContextOf = Callable[..., Context]
"""A bridge's ``context_from_<framework>(result, *, expected, sources, duration)``."""


def evaluators(
    name: str,
    *,
    run: Callable[[Any, str, dict[str, Any]], Awaitable[Any]],
    run_sync: Callable[[Any, str, dict[str, Any]], Any],
    context: ContextOf,
    sync_path: str,
) -> tuple[AsyncEvaluator, SyncEvaluator]:
    """The one-call evaluators of a framework: run ``target`` on ``prompt``, build the Context, judge it.

    Args:
        name: The framework's name in the functions' names (``aevaluate_<name>``, ``evaluate_<name>``).
        run: Runs the target asynchronously: ``(target, prompt, options) -> result``.
        run_sync: Runs it from sync code through the framework's own sync path (never a private
            event loop: frameworks keep async clients bound to the loop that first used them).
        context: Builds the Context of a result.
        sync_path: The framework's sync entry point, named in the sync function's docstring.
    """

    async def aevaluate_framework(
        target: Any,
        prompt: str,
        judge: Any,
        *,
        expected: str | None = None,
        sources: Sequence[str] = (),
        **options: Any,
    ) -> Judgment:
        started = time.perf_counter()
        result = await run(target, prompt, options)
        built = context(result, expected=expected, sources=sources, duration=time.perf_counter() - started)
        return await aevaluate(judge, built)

    def evaluate_framework(
        target: Any,
        prompt: str,
        judge: Any,
        *,
        expected: str | None = None,
        sources: Sequence[str] = (),
        **options: Any,
    ) -> Judgment:
        started = time.perf_counter()
        result = run_sync(target, prompt, options)
        built = context(result, expected=expected, sources=sources, duration=time.perf_counter() - started)
        return evaluate(judge, built)

    aevaluate_framework.__name__ = aevaluate_framework.__qualname__ = f"aevaluate_{name}"
    aevaluate_framework.__doc__ = (
        f"Run the target on ``prompt``, build the Context and judge it in one call.\n\n"
        f"Keyword options other than ``expected`` and ``sources`` go to the framework's run ({name})."
    )
    evaluate_framework.__name__ = evaluate_framework.__qualname__ = f"evaluate_{name}"
    evaluate_framework.__doc__ = (
        f"``aevaluate_{name}`` from sync code, through {sync_path} (the framework's own sync path)."
    )
    return aevaluate_framework, evaluate_framework
