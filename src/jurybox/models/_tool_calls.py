"""The tool calls in a provider's reply, read as hostile input: a name, and arguments that are a JSON object."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from jurybox.core import ToolCall
from jurybox.models._errors import ProviderError


def tool_call(name: Any, arguments: Any, call_id: Any, *, provider: str) -> ToolCall:
    """One tool call the model asked for; ``arguments`` a mapping or its JSON text (OpenAI sends text).

    Raises:
        ProviderError: no name, or arguments that are not a JSON object (an unusable reply).
    """
    if not isinstance(name, str) or not name:
        raise ProviderError("unusable response: a tool call has no name", provider=provider)
    if arguments is None or arguments == "":
        arguments = {}
    elif isinstance(arguments, str):
        try:
            arguments = json.loads(arguments)
        except ValueError as error:
            raise ProviderError(
                f"unusable response: the arguments of tool call {name!r} are not JSON ({error})",
                provider=provider,
                provider_message=arguments[:500],
            ) from error
    if not isinstance(arguments, Mapping):
        raise ProviderError(
            f"unusable response: the arguments of tool call {name!r} are a {type(arguments).__name__}, not an object",
            provider=provider,
        )
    return ToolCall(name=name, arguments=arguments, id=str(call_id) if call_id is not None else None)
