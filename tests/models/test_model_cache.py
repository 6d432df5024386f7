"""The response cache: hits, keys, the off switch, single-flight, processes sharing a file, the CLI."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from jurybox.cli import app
from jurybox.models import (
    GenerateRequest,
    ModelResponse,
    ResponseCache,
    UsageTracker,
    cache_key,
    cache_key_material,
    get_model,
)
from jurybox.stubs import StubServer

PROMPT = [{"role": "user", "content": "Is the sky blue?"}]


async def test_second_identical_call_is_a_hit_with_zero_model_calls(tmp_path: Path) -> None:
    with StubServer("openai", reply="Yes.") as stub:
        model = get_model("openai:gpt-4o-mini", base_url=stub.base_url, cache_path=tmp_path / "c.sqlite3")
        tracker = UsageTracker()
        with tracker:
            first = await model.generate(PROMPT)
            second = await model.generate(PROMPT)
    assert len(stub.requests) == 1
    assert (first.cached, second.cached) == (False, True)
    assert second.text == first.text and second.usage == first.usage and second.finish_reason == "stop"
    assert second.cost == 0.0 and second.latency == 0.0
    # Two calls, one of them a cache hit: one request reached the provider.
    assert (tracker.total.calls, tracker.total.attempts, tracker.total.cache_hits) == (2, 1, 1)


async def test_a_new_model_instance_and_a_new_process_hit_the_same_file(tmp_path: Path) -> None:
    path = tmp_path / "shared.sqlite3"
    with StubServer("ollama", reply="cached answer") as stub:
        await get_model("ollama:m", host=stub.base_url, cache_path=path).generate(PROMPT)
        again = await get_model("ollama:m", host=stub.base_url, cache_path=path).generate(PROMPT)
        script = (
            "import asyncio, sys\n"
            "from jurybox.models import get_model\n"
            f"m = get_model('ollama:m', host={stub.base_url!r}, cache_path={str(path)!r})\n"
            f"r = asyncio.run(m.generate({PROMPT!r}))\n"
            "print(r.cached, r.text)\n"
        )
        done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True, timeout=60)
    assert again.cached
    assert done.stdout.strip() == "True cached answer"
    assert len(stub.requests) == 1


def test_several_processes_write_one_file_at_once(tmp_path: Path) -> None:
    path = tmp_path / "busy.sqlite3"
    script = (
        "import sys\n"
        "from jurybox.models import ResponseCache, ModelResponse\n"
        f"cache = ResponseCache({str(path)!r})\n"
        "worker = sys.argv[1]\n"
        "for i in range(60):\n"
        "    cache.put(f'{worker}-{i}', {'i': i}, ModelResponse(text=f'{worker}:{i}', model='m'))\n"
    )
    workers = [subprocess.Popen([sys.executable, "-c", script, str(n)]) for n in range(4)]
    assert [w.wait(timeout=60) for w in workers] == [0, 0, 0, 0]
    cache = ResponseCache(path)
    assert cache.stats().entries == 240
    hit = cache.get("3-59")
    assert hit is not None and hit.text == "3:59"
    assert cache.material("3-59") == {"i": 59}


async def test_concurrent_identical_requests_are_sent_once(tmp_path: Path) -> None:
    with StubServer("anthropic", reply="once", latency=0.2) as stub:
        model = get_model("anthropic:m", base_url=stub.base_url, cache_path=tmp_path / "c.sqlite3")
        tracker = UsageTracker()
        with tracker:
            replies = await asyncio.gather(*(model.generate(PROMPT) for _ in range(10)))
    assert len(stub.requests) == 1
    assert {r.text for r in replies} == {"once"}
    assert sum(not r.cached for r in replies) == 1
    assert (tracker.total.calls, tracker.total.attempts, tracker.total.cache_hits) == (10, 1, 9)


async def test_a_failed_leader_fails_its_followers_and_nothing_is_stored(tmp_path: Path) -> None:
    with StubServer("openai", latency=0.1) as stub:
        stub.fail(400)
        model = get_model("openai:m", base_url=stub.base_url, cache_path=tmp_path / "c.sqlite3")
        results = await asyncio.gather(*(model.generate(PROMPT) for _ in range(3)), return_exceptions=True)
        assert all(isinstance(r, Exception) for r in results)
        assert (await model.generate(PROMPT)).text == "ok"
    assert len(stub.requests) == 2


async def test_followers_of_a_cancelled_leader_make_the_call_themselves(tmp_path: Path) -> None:
    with StubServer("openai", reply="answer", latency=0.3) as stub:
        model = get_model("openai:m", base_url=stub.base_url, cache_path=tmp_path / "c.sqlite3")
        leader = asyncio.create_task(model.generate(PROMPT))
        await asyncio.sleep(0.1)  # let the leader start its call (no timing is asserted)
        follower = asyncio.create_task(model.generate(PROMPT))
        await asyncio.sleep(0)
        leader.cancel()
        response = await follower
    assert leader.cancelled()
    assert response.text == "answer"


async def test_temperature_above_zero_is_not_cached_unless_asked(tmp_path: Path) -> None:
    with StubServer("openai", reply="sampled") as stub:
        auto = get_model("openai:m", base_url=stub.base_url, cache_path=tmp_path / "a.sqlite3")
        await auto.generate(PROMPT, temperature=0.7)
        await auto.generate(PROMPT, temperature=0.7)
        forced = get_model("openai:m", base_url=stub.base_url, cache=True, cache_path=tmp_path / "b.sqlite3")
        await forced.generate(PROMPT, temperature=0.7, seed=3)
        await forced.generate(PROMPT, temperature=0.7, seed=3)
        # Unseeded samples are never cached, even when asked: every sample would get one reply.
        await forced.generate(PROMPT, temperature=0.7)
        await forced.generate(PROMPT, temperature=0.7)
    assert len(stub.requests) == 5


async def test_a_damaged_cache_row_is_a_miss_and_is_replaced(tmp_path: Path) -> None:
    import sqlite3

    path = tmp_path / "c.sqlite3"
    with StubServer("openai", reply="fresh") as stub:
        model = get_model("openai:m", base_url=stub.base_url, cache_path=path)
        await model.generate(PROMPT)
        with sqlite3.connect(path) as db:
            db.execute("UPDATE responses SET response = '{not json'")
        again = await model.generate(PROMPT)
        third = await model.generate(PROMPT)
    assert (again.cached, again.text) == (False, "fresh")
    assert third.cached
    assert len(stub.requests) == 2


async def test_off_switches(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with StubServer("openai") as stub:
        off = get_model("openai:m", base_url=stub.base_url, cache=False)
        await off.generate(PROMPT)
        await off.generate(PROMPT)
        monkeypatch.setenv("JURYBOX_CACHE", "off")
        env_off = get_model("openai:m", base_url=stub.base_url, cache_path=tmp_path / "c.sqlite3")
        await env_off.generate(PROMPT)
        await env_off.generate(PROMPT)
    assert len(stub.requests) == 4
    assert not (tmp_path / "c.sqlite3").exists()


def test_default_cache_location_follows_the_environment(tmp_path: Path) -> None:
    # conftest points JURYBOX_CACHE_DIR at tmp_path / "cache".
    assert ResponseCache().path == tmp_path / "cache" / "responses.sqlite3"


def _key(**changes: object) -> str:
    fields: dict[str, object] = {
        "provider": "openai",
        "model": "gpt-4o-mini",
        "base_url": "https://api.openai.com/v1",
        "request": GenerateRequest(tuple(PROMPT)),  # type: ignore[arg-type]
        "options": None,
    }
    fields.update(changes)
    return cache_key(cache_key_material(**fields))  # type: ignore[arg-type]


def test_every_reply_deciding_input_changes_the_key() -> None:
    base = _key()
    assert _key() == base  # stable
    schema = {"type": "object", "properties": {"ok": {"type": "boolean"}}}
    variants = [
        _key(provider="anthropic"),
        _key(model="gpt-4o"),
        _key(base_url="http://127.0.0.1:8000/v1"),
        _key(request=GenerateRequest(({"role": "user", "content": "Is the sky green?"},))),  # type: ignore[arg-type]
        _key(request=GenerateRequest(({"role": "system", "content": "Is the sky blue?"},))),  # type: ignore[arg-type]
        _key(request=GenerateRequest(tuple(PROMPT), temperature=0.5)),  # type: ignore[arg-type]
        _key(request=GenerateRequest(tuple(PROMPT), max_tokens=10)),  # type: ignore[arg-type]
        _key(request=GenerateRequest(tuple(PROMPT), seed=1)),  # type: ignore[arg-type]
        _key(request=GenerateRequest(tuple(PROMPT), json_schema=schema)),  # type: ignore[arg-type]
        _key(options={"top_p": 0.9}),
    ]
    assert len({base, *variants}) == len(variants) + 1


def test_key_ignores_dict_order_and_credentials() -> None:
    one = {"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "number"}}}
    two = {"properties": {"b": {"type": "number"}, "a": {"type": "string"}}, "type": "object"}
    assert _key(request=GenerateRequest(tuple(PROMPT), json_schema=one)) == _key(  # type: ignore[arg-type]
        request=GenerateRequest(tuple(PROMPT), json_schema=two)  # type: ignore[arg-type]
    )
    first = get_model("openai:m", api_key="sk-one").cache_key_material(GenerateRequest(tuple(PROMPT)))  # type: ignore[arg-type]
    second = get_model("openai:m", api_key="sk-two", timeout=5).cache_key_material(
        GenerateRequest(tuple(PROMPT))  # type: ignore[arg-type]
    )
    assert cache_key(first) == cache_key(second)
    assert "sk-one" not in json.dumps(first)


def test_cli_explain_clear_and_stats(tmp_path: Path) -> None:
    runner = CliRunner()
    path = tmp_path / "cli.sqlite3"
    explained = runner.invoke(
        app, ["cache", "explain", "openai:gpt-4o-mini", "Is the sky blue?", "--system", "Judge.", "--path", str(path)]
    )
    assert explained.exit_code == 0, explained.output
    material_text, _, rest = explained.output.partition("key: sha256:")
    material = json.loads(material_text)
    assert material["messages"][-1] == {"role": "user", "content": "Is the sky blue?"}
    assert material["base_url"] == "https://api.openai.com/v1"
    digest = rest.split()[0]
    assert digest == cache_key(material)
    assert "stored in" in rest and ": no" in rest

    with StubServer("openai", reply="Yes.") as stub:
        model = get_model("openai:gpt-4o-mini", base_url=stub.base_url, cache_path=path)
        asyncio.run(model.generate([{"role": "user", "content": "Is the sky blue?"}]))
    stats = runner.invoke(app, ["cache", "stats", "--path", str(path)])
    assert "1 responses" in stats.output and "openai:gpt-4o-mini: 1" in stats.output
    stored_key = next(iter(ResponseCache(path).stats().by_model))
    assert stored_key == "openai:gpt-4o-mini"
    cleared = runner.invoke(app, ["cache", "clear", "--path", str(path)])
    assert cleared.exit_code == 0 and "removed 1 cached response " in cleared.output
    assert ResponseCache(path).stats().entries == 0


def test_cli_explain_a_stored_key(tmp_path: Path) -> None:
    path = tmp_path / "k.sqlite3"
    request = GenerateRequest(tuple(PROMPT))  # type: ignore[arg-type]
    with StubServer("ollama", reply="Yes.") as stub:
        model = get_model("ollama:m", host=stub.base_url, cache_path=path)
        asyncio.run(model.generate(PROMPT))
        digest = cache_key(model.cache_key_material(request))
    shown = CliRunner().invoke(app, ["cache", "explain", "--key", digest, "--path", str(path)])
    assert shown.exit_code == 0
    assert json.loads(shown.output)["messages"] == PROMPT
    missing = CliRunner().invoke(app, ["cache", "explain", "--key", "0" * 64, "--path", str(path)])
    assert missing.exit_code == 1


async def test_forget_takes_a_reply_out_so_the_same_request_asks_again(tmp_path: Path) -> None:
    with StubServer("openai", reply="Yes.") as stub:
        model = get_model("openai:gpt-4o-mini", base_url=stub.base_url, cache_path=tmp_path / "c.sqlite3")
        first = await model.generate(PROMPT)
        hit = await model.generate(PROMPT)
        assert first.cache_key is not None and hit.cache_key == first.cache_key
        assert model.forget(hit) is True
        assert model.forget(hit) is False  # nothing left to remove
        again = await model.generate(PROMPT)
    assert (first.cached, hit.cached, again.cached) == (False, True, False)
    assert len(stub.requests) == 2
    assert model.forget(ModelResponse(text="x")) is False  # a reply that never went through the cache


async def test_an_unreadable_verdict_is_not_replayed_from_the_cache_on_the_next_run(tmp_path: Path) -> None:
    from jurybox.core import Context, Status
    from jurybox.llm import correctness

    context = Context(input="2+2?", output="4", expected="4")
    path = tmp_path / "c.sqlite3"
    with StubServer("openai", reply="I cannot grade this.") as stub:
        judge = correctness(model=get_model("openai:m", base_url=stub.base_url, cache_path=path), retries=1)
        first = await judge(context)
        second = await judge(context)
    assert first.status is Status.ABSTAIN and second.status is Status.ABSTAIN
    assert len(stub.requests) == 4  # each run asked the model again (one retry each), nothing replayed

    good = json.dumps({"score": 1.0, "reasoning": "right", "issues": [], "strengths": []})
    with StubServer("openai", reply=good) as stub:
        judge = correctness(model=get_model("openai:m", base_url=stub.base_url, cache_path=path), retries=1)
        assert (await judge(context)).status is Status.PASS
        assert (await judge(context)).status is Status.PASS
    assert len(stub.requests) == 1  # a readable verdict is cached as before
