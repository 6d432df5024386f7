"""Small agents the adapter and conversation tests drive (imported by make_target through base_dir)."""

from __future__ import annotations

import asyncio
import json
import threading
from pathlib import Path
from typing import Any

RELEASE_HANGING = threading.Event()


class ForgetfulAgent:
    """Remembers the conversation only in memory: revival wipes it."""

    closed: list[str] = []  # noqa: RUF012 (a class-level log the tests read)

    def __init__(self) -> None:
        self.said: list[str] = []

    def respond(self, message: str, session_id: str) -> str:
        if message.startswith("What did I say first"):
            return f"You first said: {self.said[0]}" if self.said else "I don't know what you said before."
        self.said.append(message)
        return f"Noted: {message}"

    def close(self) -> None:
        ForgetfulAgent.closed.append("closed")


class PersistentAgent:
    """Writes every message to a JSON file per session, so it survives revival."""

    def __init__(self, folder: str) -> None:
        self.folder = Path(folder)

    def _load(self, session_id: str) -> list[str]:
        path = self.folder / f"{session_id}.json"
        return json.loads(path.read_text()) if path.exists() else []

    async def respond(self, message: str, session_id: str) -> dict[str, Any]:
        said = self._load(session_id)
        if message.startswith("What did I say first"):
            text = f"You first said: {said[0]}" if said else "I don't know what you said before."
            return {"reply": text, "tool_calls": [{"name": "load_history", "arguments": {"session": session_id}}]}
        said.append(message)
        (self.folder / f"{session_id}.json").write_text(json.dumps(said))
        return {"reply": f"Noted: {message}", "usage": {"input_tokens": 3, "output_tokens": 2}, "sources": ["notes"]}


def make_persistent(folder: str) -> PersistentAgent:
    return PersistentAgent(folder)


_pending: dict[str, str] = {}


def clarifying(message: str, session_id: str) -> dict[str, Any]:
    """Asks which month when revenue is asked for without one; answers once told."""
    if session_id in _pending:
        _pending.pop(session_id)
        return {
            "reply": f"Revenue for {message.strip()} was $4,200.",
            "tool_calls": [{"name": "get_revenue", "arguments": {"month": message.strip()}}],
        }
    if "revenue" in message.lower():
        _pending[session_id] = message
        return {"reply": "Which month would you like the revenue for?"}
    return {"reply": f"You said: {message}"}


def always_asks(message: str, session_id: str) -> str:
    return "Which property do you mean?"


def crashes(message: str, session_id: str) -> str:
    raise RuntimeError("database is down")


async def hangs(message: str, session_id: str) -> str:
    await asyncio.sleep(3600)
    return "never"


def hangs_in_thread(message: str, session_id: str) -> str:
    RELEASE_HANGING.wait(30)
    return "released"


def returns_number(message: str, session_id: str) -> int:
    return 42


def returns_wrong_dict(message: str, session_id: str) -> dict[str, str]:
    return {"text": "hello"}


def returns_none_reply(message: str, session_id: str) -> dict[str, Any]:
    return {"reply": None}


def one_argument(message: str) -> str:
    return message


_notes: dict[str, list[str]] = {}


def noting(message: str, session_id: str) -> str:
    """A function agent that keeps notes in process memory (so revival must drop them)."""
    notes = _notes.setdefault(session_id, [])
    if message.startswith("What did I say first"):
        return f"You first said: {notes[0]}" if notes else "I don't know what you said before."
    notes.append(message)
    return f"Noted: {message}"


async def forget(session_id: str) -> None:
    _notes.pop(session_id, None)
