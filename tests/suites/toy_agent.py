"""A small tool-using agent for the suite runner's tests; it keeps every message in SQLite.

Its behaviour is keyed on words in the message so one agent covers every path the
runner must handle: tools, multi-round context, revival, clarifying questions, and
the failures (crash, hang, garbage).
"""

from __future__ import annotations

import asyncio
import os
import signal
import sqlite3
import threading
from pathlib import Path
from typing import Any

_attempts: dict[str, int] = {}
_LOADED_IN = os.getpid()
_lock = threading.Lock()


class ToyAgent:
    """One session's agent object; its memory is the ``messages`` table, nothing in RAM."""

    def __init__(self, db: str, seeds: list[dict[str, Any]] | None = None) -> None:
        self.db = db
        self.seeds = seeds or []
        with sqlite3.connect(db) as connection:
            connection.execute("create table if not exists messages (session_id text, role text, content text)")

    def _history(self, session_id: str) -> list[tuple[str, str]]:
        with sqlite3.connect(self.db) as connection:
            return list(connection.execute("select role, content from messages where session_id = ?", (session_id,)))

    def _save(self, session_id: str, role: str, content: str) -> None:
        with sqlite3.connect(self.db) as connection:
            connection.execute("insert into messages values (?, ?, ?)", (session_id, role, content))

    async def respond(self, message: str, session_id: str) -> Any:
        text = message.lower()
        if "crash" in text:
            raise RuntimeError("the toy agent crashed on purpose")
        if "die" in text and os.environ.get("TOY_AGENT_MAY_DIE") == "1" and os.getpid() != _LOADED_IN:
            # A worker process killed outright (``--workers`` tests); never the test process itself.
            os.kill(os.getpid(), signal.SIGKILL)
        if "hang" in text:
            await asyncio.sleep(60)
        if "slow" in text:
            await asyncio.sleep(0.05)
        if "garbage" in text:
            return 12345
        if "flaky" in text:
            with _lock:
                _attempts[message] = _attempts.get(message, 0) + 1
                if _attempts[message] == 1:
                    raise ConnectionError("first attempt fails")
        history = self._history(session_id)
        self._save(session_id, "user", message)
        reply: Any
        if "seed" in text:
            reply = "Seeds: " + ", ".join(sorted(seed["id"] for seed in self.seeds))
        elif "listing" in text:
            reply = {
                "reply": "Your listings: Beach House, Mountain Cabin, City Apartment.",
                "tool_calls": [{"name": "get_listings", "arguments": {}}],
            }
        elif "first one" in text:
            if any("Beach House" in content for role, content in history if role == "assistant"):
                reply = {
                    "reply": "Beach House occupancy is 82% this month.",
                    "tool_calls": [{"name": "get_listing_details", "arguments": {"name": "Beach House"}}],
                }
            else:
                reply = "I do not know which listing you mean."
        elif "revenue" in text:
            reply = "Which period do you mean: this month or last month?"
        elif "last month" in text or "this month" in text:
            reply = {
                "reply": "Revenue for that period: $4,200.",
                "tool_calls": [{"name": "get_revenue", "arguments": {}}],
            }
        else:
            reply = "Hello! Ask me about your listings."
        self._save(session_id, "assistant", reply if isinstance(reply, str) else reply["reply"])
        return reply


def make_agent(db: str, seeds: list[dict[str, Any]] | None = None) -> ToyAgent:
    """The factory a suite names: ``agent: {python: "toy_agent:make_agent", options: {db: ...}}``."""
    Path(db).parent.mkdir(parents=True, exist_ok=True)
    return ToyAgent(db, seeds)
