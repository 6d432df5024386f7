"""The property assistant's entry points: ``make_agent()`` (a factory) and ``respond()`` (a function).

Both keep nothing in memory between messages: every turn reads the
conversation from the ``messages`` table and appends to it, so an assistant
closed and reopened with the same session id carries on where it left off.

Backed by an OpenAI-compatible model when ``JURYBOX_AGENT_MODEL`` is set
(see ``llm.py``), otherwise by the deterministic built-in policy, so it runs
offline. Seed records (a suite's ``seeds:``) are the host's knowledge base:
house rules, check-in instructions, notes and guest reviews (``knowledge.py``).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from examples.property_agent.knowledge import KnowledgeBase
from examples.property_agent.llm import ModelPolicy, ModelSettings
from examples.property_agent.policy import BuiltInPolicy, Memory, Turn
from examples.property_agent.store import PropertyStore, StoredMessage, default_db_path


class PropertyAgent:
    """A tool-using assistant for a short-term rental host.

    Args:
        db_path: The SQLite file (created and seeded on first use). None uses
            ``$JURYBOX_PROPERTY_DB`` or ``.jurybox/property_agent.db``.
        model: An OpenAI-compatible model name; None reads
            ``JURYBOX_AGENT_MODEL``, and without one the built-in policy answers.
        base_url: The model server's URL (``JURYBOX_AGENT_BASE_URL``).
        api_key: The model server's key (``JURYBOX_AGENT_API_KEY`` or ``OPENAI_API_KEY``).
        offline: Use the built-in policy even when a model is configured.
        seeds: The host's documents: seed records (the mappings a jurybox
            suite's ``seeds:`` passes, see ``Seed.to_dict()``) or a folder of
            seed Markdown files. Questions about rules, check-in, pets, parking
            or reviews are answered from them, and they are the reply's ``sources``.
        system_prompt: The model's instructions instead of the built-in ones (``{today}`` is
            replaced by the store's date); a suite's ``variants:`` compares prompts with it.

    Raises:
        KnowledgeError: a seed record lacks ``id``/``type``/``body`` or names an unknown listing.
    """

    def __init__(
        self,
        db_path: str | Path | None = None,
        *,
        model: str | None = None,
        base_url: str | None = None,
        api_key: str | None = None,
        offline: bool = False,
        seeds: Iterable[Mapping[str, Any]] | str | Path | None = None,
        system_prompt: str | None = None,
    ) -> None:
        self.store = PropertyStore(db_path)
        listings = self.store.listings()
        if isinstance(seeds, str | Path):
            self.knowledge = KnowledgeBase.load(seeds, listings)
        else:
            self.knowledge = KnowledgeBase.from_seeds(seeds or (), listings)
        settings = ModelSettings(model, base_url, api_key) if model else ModelSettings.from_env()
        self.model = (
            None if offline or settings is None else ModelPolicy(self.store, settings, self.knowledge, system_prompt)
        )
        self.policy = BuiltInPolicy(self.store, self.knowledge)

    @property
    def backend(self) -> str:
        return f"model:{self.model.settings.model}" if self.model is not None else "built-in policy"

    def respond(self, message: str, session_id: str) -> dict[str, Any]:
        """Answer one message in a session and persist the exchange.

        Returns:
            ``{"reply": text, "tool_calls": [{"name", "arguments", "result"}], "sources": [...], "usage": {...}}``;
            ``sources`` (the documents the answer is based on) and ``usage`` only when there are any.
        """
        if not isinstance(message, str) or not message.strip():
            raise ValueError("message must be a non-empty string")
        history = self.store.messages(session_id)
        usage: dict[str, int] = {}
        if self.model is not None:
            turn, steps, usage = self.model.reply(message, history)
        else:
            listings = self.store.listings()
            turn = self.policy.reply(message, Memory.from_messages(history, listings))
            steps = _tool_messages(turn)
        self.store.append(
            session_id,
            [StoredMessage("user", message), *steps, StoredMessage("assistant", turn.text, meta=turn.meta)],
        )
        reply: dict[str, Any] = {
            "reply": turn.text,
            "tool_calls": [{"name": u.name, "arguments": u.arguments, "result": u.result} for u in turn.tool_uses],
        }
        if turn.sources:
            reply["sources"] = list(turn.sources)
        if usage:
            reply["usage"] = usage
        return reply

    def history(self, session_id: str) -> list[StoredMessage]:
        return self.store.messages(session_id)

    def close(self) -> None:
        """Nothing to release: connections are opened per call and the conversation is already stored."""


def _tool_messages(turn: Turn) -> list[StoredMessage]:
    """The policy's tool calls stored the way a model's are: one assistant call message, then each result."""
    if not turn.tool_uses:
        return []
    calls = tuple({"id": u.id, "name": u.name, "arguments": u.arguments} for u in turn.tool_uses)
    return [
        StoredMessage("assistant", "", tool_calls=calls),
        *(StoredMessage("tool", json.dumps(u.result), tool_call_id=u.id, name=u.name) for u in turn.tool_uses),
    ]


def make_agent(
    db_path: str | Path | None = None,
    *,
    model: str | None = None,
    base_url: str | None = None,
    api_key: str | None = None,
    offline: bool = False,
    seeds: Iterable[Mapping[str, Any]] | str | Path | None = None,
    system_prompt: str | None = None,
) -> PropertyAgent:
    """Factory entry point: ``agent: {python: "examples.property_agent.agent:make_agent"}``.

    Its options are spelt out (not ``**options``), so a suite's misspelt option is found while it loads.
    """
    return PropertyAgent(
        db_path,
        model=model,
        base_url=base_url,
        api_key=api_key,
        offline=offline,
        seeds=seeds,
        system_prompt=system_prompt,
    )


_shared: dict[tuple[str, str], PropertyAgent] = {}
_shared_lock = threading.Lock()


def _default_agent() -> PropertyAgent:
    # Keyed on the configuration read from the environment, so changing
    # JURYBOX_PROPERTY_DB or JURYBOX_AGENT_MODEL takes effect on the next message.
    settings = ModelSettings.from_env()
    key = (str(default_db_path().resolve()), repr(settings))
    with _shared_lock:
        if key not in _shared:
            _shared[key] = PropertyAgent()
        return _shared[key]


def respond(message: str, session_id: str) -> dict[str, Any]:
    """Function entry point: ``agent: {python: "examples.property_agent.agent:respond"}``."""
    return _default_agent().respond(message, session_id)
