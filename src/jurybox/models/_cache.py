"""The response cache: a SQLite file shared by processes, keyed by a printable request description."""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from jurybox.models._types import GenerateRequest, ModelResponse, Usage

#: Bump when the key material or the stored record changes shape, so old entries stop matching.
CACHE_VERSION = 1
DEFAULT_CACHE_DIR = Path(".jurybox") / "cache"
CACHE_FILE = "responses.sqlite3"
_OFF = {"0", "off", "false", "no", "disabled"}


def default_cache_path() -> Path:
    """``$JURYBOX_CACHE_DIR/responses.sqlite3``, else ``.jurybox/cache/responses.sqlite3`` (relative to cwd)."""
    folder = os.environ.get("JURYBOX_CACHE_DIR")
    return (Path(folder) if folder else DEFAULT_CACHE_DIR) / CACHE_FILE


def cache_disabled_by_env() -> bool:
    """True when ``JURYBOX_CACHE`` is ``0``/``off``/``false``/``no``: the global off switch."""
    return os.environ.get("JURYBOX_CACHE", "").strip().lower() in _OFF


def plain(value: Any) -> Any:
    """Mappings and sequences as dicts and lists, so they serialize the same however they were built."""
    if isinstance(value, Mapping):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    return value


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
        request: Messages, temperature, max tokens, JSON schema and seed.
        options: Other generation options the provider receives (e.g. ``top_p``).
    """
    return {
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


def cache_key(material: Mapping[str, Any]) -> str:
    """sha256 hex digest of the canonical JSON of ``material``."""
    return hashlib.sha256(canonical_json(material).encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class CacheStats:
    """What a cache file holds."""

    path: Path
    entries: int
    size_bytes: int
    by_model: Mapping[str, int]


class ResponseCache:
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

    def get(self, key: str) -> ModelResponse | None:
        """The stored response for ``key`` (marked ``cached``, latency and cost 0), or None."""
        with self._lock:
            row = self._connect().execute("SELECT response FROM responses WHERE key = ?", (key,)).fetchone()
        if row is None:
            return None
        try:
            data = json.loads(row[0])
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
            )
        except (ValueError, KeyError, TypeError, AttributeError):
            # A damaged row (a crash mid-write by an old version, a hand edit) is a miss, not an
            # error on every identical request until someone clears the cache; the new reply replaces it.
            with self._lock:
                self._connect().execute("DELETE FROM responses WHERE key = ?", (key,))
            return None

    def put(self, key: str, material: Mapping[str, Any], response: ModelResponse) -> None:
        """Store ``response`` under ``key`` (a later write of the same key replaces it)."""
        record = {
            "text": response.text,
            "model": response.model,
            "usage": {"input_tokens": response.usage.input_tokens, "output_tokens": response.usage.output_tokens},
            "finish_reason": response.finish_reason,
            "latency": response.latency,
            "cost": response.cost,
            "raw": response.raw,
        }
        encoded = json.dumps(record, ensure_ascii=False, default=str)
        with self._lock:
            self._connect().execute(
                "INSERT OR REPLACE INTO responses (key, model, material, response, created_at) VALUES (?, ?, ?, ?, ?)",
                (key, response.model, canonical_json(material), encoded, time.time()),
            )

    def delete(self, key: str) -> bool:
        """Remove the entry for ``key``; True when there was one."""
        with self._lock:
            cursor = self._connect().execute("DELETE FROM responses WHERE key = ?", (key,))
        return cursor.rowcount > 0

    def material(self, key: str) -> dict[str, Any] | None:
        """The key material stored with ``key`` (what the cached request was), or None."""
        with self._lock:
            row = self._connect().execute("SELECT material FROM responses WHERE key = ?", (key,)).fetchone()
        return None if row is None else dict(json.loads(row[0]))

    def clear(self) -> int:
        """Delete every entry; returns how many there were."""
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


_shared: dict[Path, ResponseCache] = {}
_shared_lock = threading.Lock()


def shared_cache(path: str | Path | None = None) -> ResponseCache:
    """One ResponseCache per file per process, so models using the same file share a connection."""
    resolved = (Path(path) if path is not None else default_cache_path()).absolute()
    with _shared_lock:
        cache = _shared.get(resolved)
        if cache is None:
            cache = _shared[resolved] = ResponseCache(resolved)
        return cache
