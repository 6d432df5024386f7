"""The Target protocol: what the conversation runner needs from an agent under test."""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from jurybox.agents._reply import AgentReply


@runtime_checkable
class Target(Protocol):
    """An agent under test, reached through one of the adapters.

    The agent, not the target, is expected to keep conversation state per
    ``session_id``. ``close_session`` drops whatever state the adapter or the
    agent's process holds in memory for that session, which is how revival
    proves the agent persisted what it needs.
    """

    name: str

    async def respond(self, message: str, session_id: str) -> AgentReply:
        """Send one user message in a session and return the agent's reply."""
        ...

    async def close_session(self, session_id: str) -> None:
        """Drop the in-process state of one session (revival)."""
        ...

    async def aclose(self) -> None:
        """Release everything the target holds (processes, connections)."""
        ...
