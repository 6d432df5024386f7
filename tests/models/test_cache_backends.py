"""The response cache on each backend: a SQLite file, Redis (127.0.0.1:6379) and PostgreSQL (127.0.0.1:5432).

Every backend keeps the same records under the same keys, so a repeated request costs no
model call in this process or another, and ``jurybox cache stats|clear|explain`` work on each.
Redis and PostgreSQL tests skip (fail when CI=true) naming the address they tried.
"""

from __future__ import annotations

import asyncio
import os
import secrets
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from jurybox.cli import app
from jurybox.models import (
    CACHE_URL_ENV,
    CacheBackend,
    ModelResponse,
    Usage,
    get_model,
    open_cache,
)
from jurybox.stubs import StubServer

REDIS_URL = os.environ.get("JURYBOX_TEST_REDIS", "redis://127.0.0.1:6379/0")
PG_URL = os.environ.get("JURYBOX_TEST_PG", "postgresql+psycopg://postgres@127.0.0.1:5432/test")
PROMPT = [{"role": "user", "content": "Is the sky blue?"}]
TAG = f"jbx_{os.getpid()}_{secrets.token_hex(3)}"


def _unreachable(what: str, address: str, error: BaseException) -> None:
    reason = f"{what} at {address} is unreachable: {str(error).splitlines()[0] if str(error) else error!r}"
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(f"{reason} (CI=true: {what} tests must run, not skip)")
    pytest.skip(f"{reason}; start it (scripts/services.sh) to run these tests")


def _redis_url() -> str:
    redis = pytest.importorskip("redis", reason='the Redis cache needs pip install "jurybox[distributed]"')
    try:
        redis.Redis.from_url(REDIS_URL, socket_connect_timeout=2).ping()
    except redis.RedisError as error:
        _unreachable("Redis", REDIS_URL, error)
    # A prefix of this test's own: parallel sessions on the one server never see each other's keys.
    return f"{REDIS_URL}?prefix={TAG}_{secrets.token_hex(2)}:"


def _pg_url() -> Iterator[str]:
    psycopg = pytest.importorskip("psycopg", reason='the PostgreSQL cache needs pip install "jurybox[postgres]"')
    conninfo = "postgresql://" + PG_URL.partition("://")[2]
    schema = f"{TAG}_{secrets.token_hex(2)}"
    try:
        admin = psycopg.connect(conninfo, autocommit=True, connect_timeout=5)
    except psycopg.OperationalError as error:
        _unreachable("PostgreSQL", PG_URL, error)
    with admin:
        admin.execute(f'CREATE SCHEMA "{schema}"')
        try:
            yield f"{PG_URL}?options=-csearch_path%3D{schema}"
        finally:
            admin.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')


@pytest.fixture(
    params=[
        "sqlite",
        pytest.param("redis", marks=pytest.mark.redis),
        pytest.param("postgresql", marks=pytest.mark.postgres),
    ]
)
def location(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """An empty cache: a SQLite file path, a Redis URL (own key prefix) or a PostgreSQL URL (own schema)."""
    if request.param == "sqlite":
        yield str(tmp_path / "cache" / "responses.sqlite3")
    elif request.param == "redis":
        url = _redis_url()
        yield url
        open_cache(url).clear()
    else:
        yield from _pg_url()


def _reply(text: str, model: str = "openai:m") -> ModelResponse:
    return ModelResponse(text=text, model=model, usage=Usage(12, 3), finish_reason="stop", raw={"id": "x"})


def _damage(cache: CacheBackend, key: str) -> None:
    """Overwrite a stored record with bytes that are not a reply, as a crash mid-write might."""
    client = getattr(cache, "_client", None)
    if client is not None:  # Redis
        client.hset(cache.prefix + key, "response", "{not json")  # type: ignore[attr-defined]
    elif hasattr(cache, "_run"):  # PostgreSQL
        cache._run("UPDATE jurybox_response_cache SET response = '{not json' WHERE key = %s", (key,))
    else:
        cache._connect().execute("UPDATE responses SET response = '{not json' WHERE key = ?", (key,))  # type: ignore[attr-defined]


def test_every_backend_stores_reads_explains_and_clears_the_same_records(location: str) -> None:
    cache = open_cache(location)
    assert cache.get("k1") is None
    cache.put("k1", {"messages": ["a"], "model": "m"}, _reply("first"))
    cache.put("k2", {"messages": ["b"]}, _reply("second", model="openai:other"))
    cache.put("k2", {"messages": ["b"]}, _reply("second, again", model="openai:other"))  # replaces
    hit = cache.get("k1")
    assert hit is not None
    assert (hit.text, hit.model, hit.usage, hit.finish_reason, hit.raw) == (
        "first",
        "openai:m",
        Usage(12, 3),
        "stop",
        {"id": "x"},
    )
    assert (hit.cached, hit.cost, hit.latency, hit.cache_key) == (True, 0.0, 0.0, "k1")
    assert cache.material("k1") == {"messages": ["a"], "model": "m"}
    stats = cache.stats()
    assert (stats.entries, dict(stats.by_model)) == (2, {"openai:m": 1, "openai:other": 1})
    assert stats.size_bytes > 0
    _damage(cache, "k2")
    assert cache.get("k2") is None  # a damaged record is a miss, and is taken out
    assert cache.material("k2") is None
    assert cache.delete("k1") is True and cache.delete("k1") is False
    cache.put("k3", {}, _reply("third"))
    assert cache.clear() == 1
    assert cache.stats().entries == 0
    cache.close()


def test_a_repeated_request_costs_no_model_call_in_another_process(location: str) -> None:
    with StubServer("openai", reply="Yes.") as stub:
        model = get_model("openai:m", base_url=stub.base_url, cache_path=location)
        first = asyncio.run(model.generate(PROMPT))
        # Another process that knows the cache only from the environment, as a worker or Ray actor does.
        script = (
            "import asyncio\n"
            "from jurybox.models import get_model\n"
            f"m = get_model('openai:m', base_url={stub.base_url!r})\n"
            f"r = asyncio.run(m.generate({PROMPT!r}))\n"
            "print(r.cached, r.text)\n"
        )
        env = {**os.environ, CACHE_URL_ENV: location}
        env.pop("JURYBOX_CACHE", None)
        done = subprocess.run(
            [sys.executable, "-c", script], capture_output=True, text=True, check=True, timeout=60, env=env
        )
        assert len(stub.requests) == 1
    assert not first.cached
    assert done.stdout.strip() == "True Yes."


def test_the_cache_commands_work_on_every_backend(location: str, monkeypatch: pytest.MonkeyPatch) -> None:
    with StubServer("openai", reply="Yes.") as stub:
        base_url = stub.base_url
        asyncio.run(get_model("openai:gpt-4o-mini", base_url=base_url, cache_path=location).generate(PROMPT))
    runner = CliRunner()
    stats = runner.invoke(app, ["cache", "stats", "--cache", location])
    assert stats.exit_code == 0, stats.output
    assert "1 responses" in stats.output and "openai:gpt-4o-mini: 1" in stats.output
    explained = runner.invoke(
        app,
        [
            "cache",
            "explain",
            "openai:gpt-4o-mini",
            "Is the sky blue?",
            "--base-url",
            base_url,
            "--cache",
            location,
        ],
    )
    assert explained.exit_code == 0 and ": yes" in explained.output.splitlines()[-1]
    monkeypatch.setenv(CACHE_URL_ENV, location)  # the default when no --cache is given
    cleared = runner.invoke(app, ["cache", "clear"])
    assert cleared.exit_code == 0 and "removed 1 cached response " in cleared.output
    assert open_cache(location).stats().entries == 0


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_an_unreachable_cache_server_is_a_one_line_error_without_its_password() -> None:
    pytest.importorskip("redis")
    url = f"redis://:s3cret@127.0.0.1:{_closed_port()}/0"
    result = CliRunner().invoke(app, ["cache", "stats", "--cache", url])
    assert result.exit_code == 2
    assert "cannot use the response cache at redis://:***@127.0.0.1:" in result.output
    assert "s3cret" not in result.output and "Traceback" not in result.output
