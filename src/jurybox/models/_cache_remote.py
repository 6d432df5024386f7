"""Response caches on a server, shared by every process and machine of a run: Redis and PostgreSQL.

They keep the very records the SQLite cache keeps (same keys, same encoded reply, same
key material), so ``jurybox cache explain|stats|clear`` and a run behave the same on each.
The clients are imported when a URL names the backend: ``pip install "jurybox[distributed]"``
(redis) or ``"jurybox[postgres]"`` (psycopg).
"""

from __future__ import annotations

import contextlib
import json
import os
import threading
import time
from collections.abc import Iterator, Mapping
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit, urlunsplit

from jurybox.models._cache import CacheBackend, CacheStats, canonical_json, decode_response, encode_response
from jurybox.models._errors import ModelConfigError
from jurybox.models._types import ModelResponse

#: Every Redis key of the cache starts with this (unless the URL says ``?prefix=``), so ``clear``
#: and ``stats`` touch nothing else.
REDIS_PREFIX = "jurybox:cache:"
#: The PostgreSQL table, beside the store's tables when the cache URL is the store's database.
PG_TABLE = "jurybox_response_cache"
_SCAN_BATCH = 500


def redis_module(purpose: str) -> Any:
    """The ``redis`` client module.

    Raises:
        ModelConfigError: it is not installed (the message names ``purpose`` and the extra to install).
    """
    try:
        import redis
    except ImportError as error:
        raise ModelConfigError(f'{purpose} needs the redis client: pip install "jurybox[distributed]"') from error
    return redis


def redact(url: str) -> str:
    """``url`` with its password replaced by ``***``, fit for messages and ``jurybox cache stats``."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    host = parts.netloc.rpartition("@")[2]
    user = parts.username or ""
    return urlunsplit((parts.scheme, f"{user}:***@{host}", parts.path, parts.query, parts.fragment))


def _glob_escaped(text: str) -> str:
    """``text`` as a literal in a Redis MATCH pattern."""
    return "".join(f"\\{char}" if char in "*?[]\\" else char for char in text)


def remote_cache(url: str) -> CacheBackend:
    """The cache a ``redis://``/``rediss://`` or ``postgresql://`` URL names."""
    scheme = url.split("://", 1)[0].lower()
    if scheme in ("redis", "rediss"):
        return RedisResponseCache(url)
    return PostgresResponseCache(url)


def _unreachable(url: str, error: BaseException) -> ModelConfigError:
    first_line = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
    return ModelConfigError(f"cannot use the response cache at {redact(url)}: {first_line}")


class RedisResponseCache(CacheBackend):
    """Model responses in Redis: one hash per key (model, material, response, created_at).

    redis-py's connection pool is thread-safe and reconnects after a fork, so worker processes
    and Ray actors each open their own connections to the one server.

    Args:
        url: ``redis://[:password@]host:port/db`` (``rediss://`` for TLS); ``?prefix=team-a:`` puts
            this cache's keys under another prefix than ``jurybox:cache:`` (caches sharing a server).
    """

    def __init__(self, url: str) -> None:
        redis = redis_module(f"a Redis response cache ({redact(url)})")
        self.url = url
        parts = urlsplit(url)
        query = parse_qs(parts.query, keep_blank_values=True)
        self.prefix = (query.pop("prefix", None) or [REDIS_PREFIX])[-1] or REDIS_PREFIX
        server = urlunsplit((*parts[:3], urlencode(query, doseq=True), parts.fragment))
        self._errors: tuple[type[BaseException], ...] = (redis.RedisError,)
        try:
            self._client = redis.Redis.from_url(server, socket_connect_timeout=5, socket_timeout=30)
        except ValueError as error:  # a malformed URL or option
            raise _unreachable(url, error) from error

    @property
    def location(self) -> str:
        return redact(self.url)

    def _call(self, method: str, *args: Any) -> Any:
        try:
            return getattr(self._client, method)(*args)
        except self._errors as error:
            raise _unreachable(self.url, error) from error

    def exists(self) -> bool:
        self._call("ping")
        return True

    def get(self, key: str) -> ModelResponse | None:
        stored = self._call("hget", self.prefix + key, "response")
        if stored is None:
            return None
        response = decode_response(key, stored)
        if response is None:  # a damaged record is a miss; the new reply replaces it
            self._call("delete", self.prefix + key)
        return response

    def put(self, key: str, material: Mapping[str, Any], response: ModelResponse) -> None:
        record = {
            "model": response.model,
            "material": canonical_json(material),
            "response": encode_response(response),
            "created_at": repr(time.time()),
        }
        self._call("hset", self.prefix + key, None, None, record)

    def delete(self, key: str) -> bool:
        return bool(self._call("delete", self.prefix + key))

    def material(self, key: str) -> dict[str, Any] | None:
        stored = self._call("hget", self.prefix + key, "material")
        return None if stored is None else dict(json.loads(stored))

    def _keys(self) -> Iterator[list[bytes]]:
        """Every cache key, a batch at a time (SCAN never blocks the server like KEYS does)."""
        batch: list[bytes] = []
        try:
            for name in self._client.scan_iter(match=_glob_escaped(self.prefix) + "*", count=_SCAN_BATCH):
                batch.append(name)
                if len(batch) >= _SCAN_BATCH:
                    yield batch
                    batch = []
        except self._errors as error:
            raise _unreachable(self.url, error) from error
        if batch:
            yield batch

    def clear(self) -> int:
        removed = 0
        for batch in list(self._keys()):
            removed += int(self._call("unlink", *batch))
        return removed

    def stats(self) -> CacheStats:
        by_model: dict[str, int] = {}
        size = 0
        for batch in self._keys():
            pipe = self._client.pipeline(transaction=False)
            for name in batch:
                pipe.hget(name, "model")
                pipe.hstrlen(name, "response")
                pipe.hstrlen(name, "material")
            try:
                values = pipe.execute()
            except self._errors as error:
                raise _unreachable(self.url, error) from error
            for index in range(0, len(values), 3):
                model, response_bytes, material_bytes = values[index : index + 3]
                if model is None:  # removed between SCAN and the pipeline
                    continue
                label = model.decode("utf-8", "replace") if isinstance(model, bytes) else str(model)
                by_model[label] = by_model.get(label, 0) + 1
                size += int(response_bytes) + int(material_bytes)
        return CacheStats(self.location, sum(by_model.values()), size, by_model)

    def close(self) -> None:
        self._client.close()

    def __repr__(self) -> str:
        return f"RedisResponseCache({self.location!r})"


class PostgresResponseCache(CacheBackend):
    """Model responses in a PostgreSQL table (``jurybox_response_cache``), e.g. in the store's database.

    One autocommit connection per process (a forked child opens its own), guarded by a lock so
    threads take turns; an upsert makes concurrent writers of one key safe.

    Args:
        url: ``postgresql://user[:password]@host:port/db`` (``postgresql+psycopg://`` as the store
            spells it is accepted too).
    """

    def __init__(self, url: str) -> None:
        try:
            import psycopg
        except ImportError as error:
            raise ModelConfigError(
                f'a PostgreSQL response cache ({redact(url)}) needs psycopg: pip install "jurybox[postgres]"'
            ) from error
        self.url = url
        rest = url.partition("://")[2]
        self._conninfo = f"postgresql://{rest}"
        self._psycopg = psycopg
        self._lock = threading.Lock()
        self._connection: Any = None
        self._connected_in = os.getpid()

    @property
    def location(self) -> str:
        return redact(self.url)

    def _run(self, sql: str, params: tuple[Any, ...] = ()) -> Any:
        """Execute one statement on this process's connection; returns the cursor."""
        with self._lock:
            try:
                return self._connect().execute(sql, params)
            except self._psycopg.OperationalError as error:
                # A dropped connection is opened afresh on the next call.
                self._connection = None
                raise _unreachable(self.url, error) from error

    def _connect(self) -> Any:
        if self._connected_in != os.getpid():
            # A forked child must not use (or close) its parent's socket: it opens its own.
            self._connection = None
            self._connected_in = os.getpid()
        if self._connection is None or self._connection.closed:
            connection = self._psycopg.connect(self._conninfo, autocommit=True, connect_timeout=5)
            # UniqueViolation: another process created the table at the same moment.
            with contextlib.suppress(self._psycopg.errors.UniqueViolation):
                connection.execute(
                    f"CREATE TABLE IF NOT EXISTS {PG_TABLE} ("
                    " key TEXT PRIMARY KEY, model TEXT NOT NULL, material TEXT NOT NULL,"
                    " response TEXT NOT NULL, created_at DOUBLE PRECISION NOT NULL)"
                )
            self._connection = connection
        return self._connection

    def exists(self) -> bool:
        self._run("SELECT 1")
        return True

    def get(self, key: str) -> ModelResponse | None:
        row = self._run(f"SELECT response FROM {PG_TABLE} WHERE key = %s", (key,)).fetchone()
        if row is None:
            return None
        response = decode_response(key, row[0])
        if response is None:  # a damaged record is a miss; the new reply replaces it
            self._run(f"DELETE FROM {PG_TABLE} WHERE key = %s", (key,))
        return response

    def put(self, key: str, material: Mapping[str, Any], response: ModelResponse) -> None:
        self._run(
            f"INSERT INTO {PG_TABLE} (key, model, material, response, created_at) VALUES (%s, %s, %s, %s, %s)"
            " ON CONFLICT (key) DO UPDATE SET model = EXCLUDED.model, material = EXCLUDED.material,"
            " response = EXCLUDED.response, created_at = EXCLUDED.created_at",
            (key, response.model, canonical_json(material), encode_response(response), time.time()),
        )

    def delete(self, key: str) -> bool:
        return int(self._run(f"DELETE FROM {PG_TABLE} WHERE key = %s", (key,)).rowcount) > 0

    def material(self, key: str) -> dict[str, Any] | None:
        row = self._run(f"SELECT material FROM {PG_TABLE} WHERE key = %s", (key,)).fetchone()
        return None if row is None else dict(json.loads(row[0]))

    def clear(self) -> int:
        return int(self._run(f"DELETE FROM {PG_TABLE}").rowcount)

    def stats(self) -> CacheStats:
        rows = self._run(f"SELECT model, COUNT(*) FROM {PG_TABLE} GROUP BY model").fetchall()
        size = self._run(f"SELECT pg_total_relation_size('{PG_TABLE}')").fetchone()[0]
        by_model = {str(model): int(count) for model, count in rows}
        return CacheStats(self.location, sum(by_model.values()), int(size or 0), by_model)

    def close(self) -> None:
        with self._lock:
            if self._connection is not None and self._connected_in == os.getpid():
                self._connection.close()
            self._connection = None

    def __repr__(self) -> str:
        return f"PostgresResponseCache({self.location!r})"
