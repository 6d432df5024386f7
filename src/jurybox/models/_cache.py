"""The response cache: a SQLite file shared by processes, keyed by a printable request description.

``CacheBackend`` is what every cache offers; ``ResponseCache`` keeps it in a SQLite file, and
``open_cache`` picks a backend from a location: a file path, or a ``redis://`` or
``postgresql://`` URL for a cache shared by machines (``_cache_remote.py``).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import sqlite3
import threading
import time
from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from jurybox.core import ToolCall
from jurybox.models._types import GenerateRequest, ModelResponse, Usage, plain

#: Bump when the key material or the stored record changes shape, so old entries stop matching.
CACHE_VERSION = 1
DEFAULT_CACHE_DIR = Path(".jurybox") / "cache"
CACHE_FILE = "responses.sqlite3"
#: A cache URL (``redis://host:6379/0``, ``postgresql://user@host/db``) every process of a run uses.
CACHE_URL_ENV = "JURYBOX_CACHE_URL"
#: ``off`` (also 0/false/no): no model reads or writes the cache; ``refresh``: replies are asked
#: of the model again and written over what the cache held (``jurybox run --refresh-cache``).
CACHE_MODE_ENV = "JURYBOX_CACHE"
REFRESH = "refresh"
_OFF = {"0", "off", "false", "no", "disabled"}
_REMOTE = re.compile(r"(rediss?|postgres(ql)?(\+psycopg)?)://", re.IGNORECASE)


def default_cache_path() -> Path:
    """``$JURYBOX_CACHE_DIR/responses.sqlite3``, else ``.jurybox/cache/responses.sqlite3`` (relative to cwd)."""
    folder = os.environ.get("JURYBOX_CACHE_DIR")
    return (Path(folder) if folder else DEFAULT_CACHE_DIR) / CACHE_FILE


def default_cache_location() -> str | Path:
    """``$JURYBOX_CACHE_URL`` when set, else ``default_cache_path()``."""
    return os.environ.get(CACHE_URL_ENV, "").strip() or default_cache_path()


def is_cache_url(location: str | Path) -> bool:
    """True for a ``redis://``, ``rediss://`` or ``postgresql://`` URL; False for a file path."""
    return isinstance(location, str) and _REMOTE.match(location) is not None


def cache_disabled_by_env() -> bool:
    """True when ``JURYBOX_CACHE`` is ``0``/``off``/``false``/``no``: the global off switch."""
    return os.environ.get(CACHE_MODE_ENV, "").strip().lower() in _OFF


def cache_refreshed_by_env() -> bool:
    """True when ``JURYBOX_CACHE=refresh``: every cached request is asked again, its reply written anew."""
    return os.environ.get(CACHE_MODE_ENV, "").strip().lower() == REFRESH


def canonical_json(value: Any) -> str:
    """One text per value: sorted keys, no spaces, unicode kept."""
    return json.dumps(plain(value), sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def cache_key_material(
    *,
    provider: str,
    model: str,
    base_url: str | None,
    request: GenerateRequest,
    options: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """Everything that decides a reply, and nothing else (no API key, no timeout, no retry settings).

    Args:
        provider: ``openai``, ``anthropic``, ``ollama``...
        model: The provider's model name.
        base_url: The server the request goes to (a local vLLM and OpenAI differ).
        request: Messages, temperature, max tokens, JSON schema, seed and tools.
        options: Other generation options the provider receives (e.g. ``top_p``).

    A request without tools has no ``tools`` entry: its key is the one it had before requests
    could carry tools, so caches written then still hit.
    """
    material = {
        "version": CACHE_VERSION,
        "provider": provider,
        "model": model,
        "base_url": base_url,
        "messages": [m.to_dict() for m in request.messages],
        "json_schema": plain(request.json_schema) if request.json_schema is not None else None,
        "options": {
            "temperature": request.temperature,
            "max_tokens": request.max_tokens,
            "seed": request.seed,
            **plain(dict(options or {})),
        },
    }
    if request.tools:
        material["tools"] = [tool.to_dict() for tool in request.tools]
    return material


def cache_key(material: Mapping[str, Any]) -> str:
    """sha256 hex digest of the canonical JSON of ``material``."""
    return hashlib.sha256(canonical_json(material).encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class CacheStats:
    """What a cache holds.

    Attributes:
        path: The SQLite file, or the server's URL (password hidden) for a shared cache.
        entries: Responses stored.
        size_bytes: What they take: the file size, or the bytes the server reports.
        by_model: Responses per ``provider:model``.
    """

    path: Path | str
    entries: int
    size_bytes: int
    by_model: Mapping[str, int]


class CacheBackend(ABC):
    """Where model responses are kept: one key, one successful reply.

    Every backend stores the same record (``encode_response``) and reads it back the same way
    (``decode_response``), so a reply cached by one process is a hit in every other.
    """

    @property
    @abstractmethod
    def location(self) -> str:
        """The file or server the cache lives in, fit to print (no password)."""

    @abstractmethod
    def exists(self) -> bool:
        """Whether there is a cache to read (a file not yet created is none)."""

    @abstractmethod
    def get(self, key: str) -> ModelResponse | None:
        """The stored response for ``key`` (marked ``cached``, latency and cost 0), or None."""

    @abstractmethod
    def put(self, key: str, material: Mapping[str, Any], response: ModelResponse) -> None:
        """Store ``response`` under ``key`` (a later write of the same key replaces it)."""

    @abstractmethod
    def delete(self, key: str) -> bool:
        """Remove the entry for ``key``; True when there was one."""

    @abstractmethod
    def material(self, key: str) -> dict[str, Any] | None:
        """The key material stored with ``key`` (what the cached request was), or None."""

    @abstractmethod
    def clear(self) -> int:
        """Delete every entry; returns how many there were."""

    @abstractmethod
    def stats(self) -> CacheStats:
        """Entries, size and entries per model."""

    @abstractmethod
    def close(self) -> None:
        """Let go of the connection (the next call opens a new one)."""


def encode_response(response: ModelResponse) -> str:
    """The stored record of a reply: its text, model, usage, finish reason and raw body as JSON."""
    record = {
        "text": response.text,
        "model": response.model,
        "usage": {"input_tokens": response.usage.input_tokens, "output_tokens": response.usage.output_tokens},
        "finish_reason": response.finish_reason,
        "latency": response.latency,
        "cost": response.cost,
        "raw": response.raw,
    }
    if response.tool_calls:  # only then: a record without them is the one written before tools
        record["tool_calls"] = [
            {"name": call.name, "arguments": plain(call.arguments), "id": call.id} for call in response.tool_calls
        ]
    return json.dumps(record, ensure_ascii=False, default=str)


def decode_response(key: str, stored: str | bytes) -> ModelResponse | None:
    """The reply a stored record holds, as a cache hit; None for a damaged record."""
    try:
        data = json.loads(stored)
        usage = data.get("usage") or {}
        return ModelResponse(
            text=data["text"],
            model=data.get("model", ""),
            usage=Usage(usage.get("input_tokens"), usage.get("output_tokens")),
            latency=0.0,
            finish_reason=data.get("finish_reason"),
            cost=0.0,  # a cached reply costs nothing; the original call's cost was counted when it was made
            cached=True,
            raw=data.get("raw"),
            cache_key=key,
            tool_calls=tuple(
                ToolCall(name=call["name"], arguments=call.get("arguments") or {}, id=call.get("id"))
                for call in data.get("tool_calls") or ()
            ),
        )
    except (ValueError, KeyError, TypeError, AttributeError):
        return None


class ResponseCache(CacheBackend):
    """Model responses in a SQLite file, safe to share between threads and processes.

    WAL journaling lets readers work while one process writes; a busy timeout makes
    writers wait for each other instead of failing. Only successful replies are stored.

    Args:
        path: The SQLite file (parent folders are created); None -> ``default_cache_path()``.
        busy_timeout: Seconds a writer waits for another process's lock.
    """

    def __init__(self, path: str | Path | None = None, *, busy_timeout: float = 30.0) -> None:
        self.path = Path(path) if path is not None else default_cache_path()
        self._busy_timeout = busy_timeout
        self._lock = threading.Lock()
        self._connection: sqlite3.Connection | None = None
        self._connected_in = os.getpid()
        self._inherited: list[sqlite3.Connection] = []

    def _connect(self) -> sqlite3.Connection:
        if self._connected_in != os.getpid():
            # A forked child (``jurybox run --workers``) inherited the parent's connection, which
            # SQLite forbids using across fork, or closing: kept, untouched, and this process opens its own.
            if self._connection is not None:
                self._inherited.append(self._connection)
            self._connection = None
            self._connected_in = os.getpid()
        if self._connection is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            connection = sqlite3.connect(
                self.path, timeout=self._busy_timeout, isolation_level=None, check_same_thread=False
            )
            connection.execute(f"PRAGMA busy_timeout = {int(self._busy_timeout * 1000)}")
            connection.execute("PRAGMA journal_mode = WAL")
            connection.execute("PRAGMA synchronous = NORMAL")
            connection.execute(
                "CREATE TABLE IF NOT EXISTS responses ("
                " key TEXT PRIMARY KEY, model TEXT NOT NULL, material TEXT NOT NULL,"
                " response TEXT NOT NULL, created_at REAL NOT NULL)"
            )
            self._connection = connection
        return self._connection

    @property
    def location(self) -> str:
        return str(self.path)

    def exists(self) -> bool:
        return self.path.exists()

    def get(self, key: str) -> ModelResponse | None:
        with self._lock:
            row = self._connect().execute("SELECT response FROM responses WHERE key = ?", (key,)).fetchone()
        if row is None:
            return None
        response = decode_response(key, row[0])
        if response is None:
            # A damaged row (a crash mid-write by an old version, a hand edit) is a miss, not an
            # error on every identical request until someone clears the cache; the new reply replaces it.
            with self._lock:
                self._connect().execute("DELETE FROM responses WHERE key = ?", (key,))
        return response

    def put(self, key: str, material: Mapping[str, Any], response: ModelResponse) -> None:
        encoded = encode_response(response)
        with self._lock:
            self._connect().execute(
                "INSERT OR REPLACE INTO responses (key, model, material, response, created_at) VALUES (?, ?, ?, ?, ?)",
                (key, response.model, canonical_json(material), encoded, time.time()),
            )

    def delete(self, key: str) -> bool:
        with self._lock:
            cursor = self._connect().execute("DELETE FROM responses WHERE key = ?", (key,))
        return cursor.rowcount > 0

    def material(self, key: str) -> dict[str, Any] | None:
        with self._lock:
            row = self._connect().execute("SELECT material FROM responses WHERE key = ?", (key,)).fetchone()
        return None if row is None else dict(json.loads(row[0]))

    def clear(self) -> int:
        with self._lock:
            connection = self._connect()
            count = int(connection.execute("SELECT COUNT(*) FROM responses").fetchone()[0])
            connection.execute("DELETE FROM responses")
            connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            connection.execute("VACUUM")
        return count

    def stats(self) -> CacheStats:
        with self._lock:
            rows = self._connect().execute("SELECT model, COUNT(*) FROM responses GROUP BY model").fetchall()
        by_model = {str(model): int(count) for model, count in rows}
        size = sum(p.stat().st_size for p in self.path.parent.glob(self.path.name + "*") if p.is_file())
        return CacheStats(self.path, sum(by_model.values()), size, by_model)

    def close(self) -> None:
        with self._lock:
            if self._connection is not None:
                self._connection.close()
                self._connection = None

    def __repr__(self) -> str:
        return f"ResponseCache({str(self.path)!r})"


def open_cache(location: str | Path | None = None) -> CacheBackend:
    """The cache at ``location``: a SQLite file path, or a ``redis://``/``postgresql://`` URL.

    None means ``default_cache_location()`` (``$JURYBOX_CACHE_URL``, else the default file).
    A URL's backend connects on first use; ``ModelConfigError`` then names an unreachable server.
    """
    resolved = default_cache_location() if location is None else location
    if is_cache_url(resolved):
        from jurybox.models._cache_remote import remote_cache  # redis/psycopg: loaded only when used

        return remote_cache(str(resolved))
    return ResponseCache(resolved)


_shared: dict[str, CacheBackend] = {}
_shared_lock = threading.Lock()


def shared_cache(location: str | Path | None = None) -> CacheBackend:
    """One cache per location per process, so models using the same cache share a connection."""
    resolved = default_cache_location() if location is None else location
    name = str(resolved) if is_cache_url(resolved) else str(Path(resolved).absolute())
    with _shared_lock:
        cache = _shared.get(name)
        if cache is None:
            cache = _shared[name] = open_cache(name)
        return cache


CacheSetting = bool | Literal["auto"] | CacheBackend
"""A model's ``cache=``: ``"auto"`` (temperature 0 only), True, False, or a backend of its own."""
