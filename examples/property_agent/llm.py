"""The model-backed assistant: an OpenAI-compatible chat model calling the same tools.

Configured by ``JURYBOX_AGENT_MODEL`` (the model name), ``JURYBOX_AGENT_BASE_URL``
(any OpenAI-compatible server: OpenAI, Ollama, vLLM...) and
``JURYBOX_AGENT_API_KEY`` (falling back to ``OPENAI_API_KEY``).
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from examples.property_agent.knowledge import KnowledgeBase
from examples.property_agent.language import named_listings
from examples.property_agent.policy import ToolUse, Turn
from examples.property_agent.store import PropertyStore, StoredMessage
from examples.property_agent.tools import TOOL_SCHEMAS, call_tool

MODEL_ENV = "JURYBOX_AGENT_MODEL"
BASE_URL_ENV = "JURYBOX_AGENT_BASE_URL"
API_KEY_ENV = "JURYBOX_AGENT_API_KEY"
MAX_STEPS = 6

SYSTEM_PROMPT = """You are the assistant of a short-term rental host on a property management platform.
Answer questions about the host's listings, bookings, revenue and occupancy using the tools; never invent figures.
Today is {today}. Revenue is realized for whole months before today; bookings after today are upcoming.
When the host refers to "the first one" or "it", use the earlier conversation to know which listing they mean.
If a request is ambiguous (for example revenue with no period and no property), ask one short clarifying question
instead of guessing. Amounts are in US dollars. Be concise."""

DOCUMENTS_PROMPT = """
The host's documents that match this message (house rules, check-in instructions, notes, guest reviews) follow.
Answer questions about rules, check-in, pets, parking or reviews only from them and cite the [id] you used;
if they do not say, tell the host you don't know rather than guessing.

{documents}"""


@dataclass(frozen=True)
class ModelSettings:
    """Which model answers, and where."""

    model: str
    base_url: str | None = None
    api_key: str | None = None
    temperature: float = 0.0

    @classmethod
    def from_env(cls) -> ModelSettings | None:
        model = os.environ.get(MODEL_ENV)
        if not model:
            return None
        return cls(
            model=model,
            base_url=os.environ.get(BASE_URL_ENV) or None,
            api_key=os.environ.get(API_KEY_ENV) or os.environ.get("OPENAI_API_KEY") or None,
        )


def to_openai(message: StoredMessage) -> dict[str, Any]:
    """A stored message in the chat-completions format."""
    if message.role == "tool":
        return {"role": "tool", "tool_call_id": message.tool_call_id, "content": message.content}
    data: dict[str, Any] = {"role": message.role, "content": message.content}
    if message.tool_calls:
        data["tool_calls"] = [
            {
                "id": call["id"],
                "type": "function",
                "function": {"name": call["name"], "arguments": json.dumps(call["arguments"])},
            }
            for call in message.tool_calls
        ]
    return data


class ModelPolicy:
    """Runs the tool-calling loop against an OpenAI-compatible chat model."""

    def __init__(
        self,
        store: PropertyStore,
        settings: ModelSettings,
        knowledge: KnowledgeBase | None = None,
        system_prompt: str | None = None,
    ) -> None:
        from openai import OpenAI

        self.store = store
        self.settings = settings
        self.knowledge = knowledge if knowledge is not None else KnowledgeBase(())
        self.system_prompt = system_prompt if system_prompt is not None else SYSTEM_PROMPT
        # Self-hosted servers need no key, but the SDK insists on one.
        self.client = OpenAI(api_key=settings.api_key or "unused", base_url=settings.base_url)

    def reply(self, message: str, history: Sequence[StoredMessage]) -> tuple[Turn, list[StoredMessage], dict[str, int]]:
        """Answer ``message``; returns the turn, the intermediate messages to store, and token usage."""
        # replace, not format: a prompt of one's own may hold other braces (JSON in an example, say).
        prompt = self.system_prompt.replace("{today}", self.store.as_of().isoformat())
        documents = self.documents(message, history)
        if documents:
            prompt += DOCUMENTS_PROMPT.format(documents="\n\n".join(documents))
        system = {"role": "system", "content": prompt}
        messages: list[dict[str, Any]] = [system, *(to_openai(m) for m in history if m.role != "system")]
        messages.append({"role": "user", "content": message})
        steps: list[StoredMessage] = []
        uses: list[ToolUse] = []
        usage = {"input_tokens": 0, "output_tokens": 0}
        for _ in range(MAX_STEPS):
            response = self.client.chat.completions.create(
                model=self.settings.model,
                messages=messages,  # type: ignore[arg-type]
                tools=TOOL_SCHEMAS,  # type: ignore[arg-type]
                temperature=self.settings.temperature,
            )
            if response.usage is not None:
                usage["input_tokens"] += response.usage.prompt_tokens
                usage["output_tokens"] += response.usage.completion_tokens
            reply = response.choices[0].message
            calls = [call for call in reply.tool_calls or () if getattr(call, "function", None) is not None]
            if not calls:
                return Turn(reply.content or "", uses, {"intent": "model"}, sources=documents), steps, usage
            requested = []
            for call in calls:
                try:
                    arguments = json.loads(call.function.arguments or "{}")  # type: ignore[union-attr]
                except json.JSONDecodeError:
                    arguments = None
                name = call.function.name  # type: ignore[union-attr]
                if isinstance(arguments, dict):
                    result = call_tool(self.store, name, arguments)
                else:
                    arguments, result = {}, {"error": "arguments must be a JSON object"}
                uses.append(ToolUse(call.id, name, arguments, result))
                requested.append({"id": call.id, "name": name, "arguments": arguments})
            assistant = StoredMessage("assistant", reply.content or "", tool_calls=tuple(requested))
            steps.append(assistant)
            messages.append(to_openai(assistant))
            for use in uses[-len(calls) :]:
                tool_message = StoredMessage("tool", json.dumps(use.result), tool_call_id=use.id, name=use.name)
                steps.append(tool_message)
                messages.append(to_openai(tool_message))
        raise RuntimeError(f"the model was still calling tools after {MAX_STEPS} steps")

    def documents(self, message: str, history: Sequence[StoredMessage]) -> list[str]:
        """The documents matching the message, as sources; "is it pet friendly?" uses the listing talked about last."""
        listings = self.store.listings()
        focus: list[int] = []
        for earlier in reversed(history):
            if earlier.role in ("user", "assistant") and earlier.content:
                focus = named_listings(earlier.content, listings)
                if focus:
                    break
        return [hit.document.as_source() for hit in self.knowledge.search(message, focus)]
