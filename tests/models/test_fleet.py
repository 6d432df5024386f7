"""A judge fleet: one model on several OpenAI-compatible stub servers on 127.0.0.1.

Load goes to the endpoint with the fewest requests in flight; an endpoint that goes down is
taken out, probed and put back; all down is a clear error at once; a 429 rests one endpoint.
"""

from __future__ import annotations

import asyncio
import socket
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from jurybox.models import (
    ChatMessage,
    FleetModel,
    FleetUnavailableError,
    GenerateRequest,
    ModelConfigError,
    ModelSpec,
    RetryPolicy,
    count_endpoint_calls,
    get_model,
)
from jurybox.stubs import StubServer

PROMPT = [{"role": "user", "content": "Is the sky blue?"}]


def _chat_requests(stub: StubServer) -> int:
    """Chat calls a stub received (the fleet's probes, GET /models, left out)."""
    return sum(1 for request in stub.requests if request.method == "POST")


def _port(stub: StubServer) -> int:
    return int(stub.url.rsplit(":", 1)[1])


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture
def stubs() -> Iterator[list[StubServer]]:
    servers = [StubServer("openai", reply="PASS", latency=0.02).start() for _ in range(3)]
    yield servers
    for server in servers:
        server.stop()


def _fleet(urls: list[str], **options: object) -> FleetModel:
    options = {"cache": False, "probe_interval": 0.05, "probe_max_interval": 0.2, **options}
    model = get_model(f"openai:judge@{','.join(urls)}", **options)
    assert isinstance(model, FleetModel)
    return model


def test_fleet_specs_round_trip_and_explain_their_mistakes() -> None:
    spec = ModelSpec.parse("openai:judge@http://a:8000/v1/, http://b:8000/v1")
    assert spec.endpoints == ("http://a:8000/v1", "http://b:8000/v1")
    assert ModelSpec.parse(str(spec)) == spec
    assert str(ModelSpec.fleet("judge", ["http://a/v1"])) == "openai:judge@http://a/v1"  # a fleet of one is a server
    mapping = ModelSpec.from_mapping({"model": "judge", "endpoints": ["http://a/v1", "http://b/v1"]})
    assert str(mapping) == "openai:judge@http://a/v1,http://b/v1"
    with pytest.raises(ModelConfigError, match="unknown field 'endpoint'"):
        ModelSpec.from_mapping({"model": "judge", "endpoint": ["http://a/v1"]})
    with pytest.raises(ModelConfigError, match="twice"):
        ModelSpec.fleet("judge", ["http://a/v1", "http://a/v1/"])
    with pytest.raises(ModelConfigError, match="provider openai"):
        ModelSpec.from_mapping({"model": "m", "provider": "anthropic", "endpoints": ["http://a/v1", "http://b/v1"]})
    with pytest.raises(ModelConfigError, match="must look like"):
        ModelSpec.fleet("judge", ["http://a/v1", "ftp://b"])


async def test_calls_go_to_the_endpoint_with_fewest_in_flight(stubs: list[StubServer]) -> None:
    first, second, _ = stubs
    fleet = _fleet([first.base_url, second.base_url])
    even = await asyncio.gather(*(fleet.generate([{"role": "user", "content": f"q{i}"}]) for i in range(40)))
    assert all(reply.text == "PASS" for reply in even)
    assert (_chat_requests(first), _chat_requests(second)) == (20, 20)  # ties take turns

    # One slow call holds the first endpoint: every call made meanwhile goes to the second.
    first.slow(0.5)
    slow = asyncio.create_task(fleet.generate([{"role": "user", "content": "slow"}]))
    while _chat_requests(first) == 20:
        await asyncio.sleep(0.005)
    for index in range(5):
        await fleet.generate([{"role": "user", "content": f"while slow {index}"}])
    assert (_chat_requests(first), _chat_requests(second)) == (21, 25)
    await slow
    assert fleet.endpoint_calls()[first.base_url].calls == 21


async def test_an_endpoint_going_down_mid_run_loses_no_call_and_comes_back(stubs: list[StubServer]) -> None:
    fleet = _fleet([stub.base_url for stub in stubs])
    down = stubs[1]
    down_url, down_port = down.base_url, _port(down)
    gate = asyncio.Semaphore(12)
    done = 0

    async def call(index: int) -> str:
        nonlocal done
        async with gate:
            reply = await fleet.generate([{"role": "user", "content": f"case {index}"}])
            done += 1
            if done == 20:
                await asyncio.to_thread(down.stop)  # the server dies with calls in flight
            return reply.text

    with count_endpoint_calls() as tally:
        replies = await asyncio.gather(*(call(i) for i in range(60)))
        # The stub stops serving at its next tick (up to 0.1 s after stop()): the other 40 calls may all be
        # answered before it does, and then none found it down. The run goes on, 12 calls at a time, until
        # one has (the first batch, as the dead endpoint takes its turn), within a bounded time.
        deadline = time.monotonic() + 10
        while down_url not in fleet.out_of_service() and time.monotonic() < deadline:
            replies += await asyncio.gather(*(call(len(replies) + i) for i in range(12)))
    assert replies == ["PASS"] * len(replies)  # no call failed: the down endpoint's calls went to the others
    assert down_url in fleet.out_of_service()
    assert sum(counts.calls for counts in tally.values()) == len(replies)
    served_before = _chat_requests(down)

    revived = StubServer("openai", reply="PASS", port=down_port).start()
    try:
        deadline = time.monotonic() + 10
        while fleet.out_of_service() and time.monotonic() < deadline:
            await asyncio.sleep(0.02)
        assert fleet.out_of_service() == {}
        await asyncio.gather(*(fleet.generate([{"role": "user", "content": f"after {i}"}]) for i in range(30)))
        assert _chat_requests(revived) >= 5  # back in service, it takes its share again
        assert any(request.method == "GET" and request.path == "/v1/models" for request in revived.requests)
    finally:
        revived.stop()
    stats = fleet.endpoint_calls()
    assert stats[down_url].calls == served_before + _chat_requests(revived)
    assert sum(counts.calls for counts in stats.values()) == len(replies) + 30


async def test_every_endpoint_down_is_a_clear_error_at_once() -> None:
    urls = [f"http://127.0.0.1:{_closed_port()}/v1" for _ in range(2)]
    fleet = _fleet(urls, retry=RetryPolicy(max_retries=4, base_delay=5.0))
    started = time.monotonic()
    with pytest.raises(FleetUnavailableError) as raised:
        await fleet.generate(PROMPT)
    message = str(raised.value)
    assert "every endpoint of fleet openai:judge is out of service" in message
    assert all(f"{url}: connection refused" in message for url in urls)
    # The next call does not wait for anything either: it fails before sending.
    with pytest.raises(FleetUnavailableError):
        await fleet.generate([{"role": "user", "content": "again"}])
    assert time.monotonic() - started < 5.0  # never the 5 s backoff: nothing waited
    assert set(fleet.out_of_service()) == set(urls)
    assert {url: counts.errors for url, counts in fleet.endpoint_calls().items()} == dict.fromkeys(urls, 1)


async def test_a_429_rests_only_its_endpoint_for_its_retry_after(stubs: list[StubServer]) -> None:
    limited, other, _ = stubs
    fleet = _fleet([limited.base_url, other.base_url], concurrency=8)
    limited.fail(429, retry_after=0.6)
    reply = await fleet.generate(PROMPT)  # the 429 on the first endpoint; answered by the second
    assert (reply.text, reply.attempts) == ("PASS", 2)
    for index in range(4):
        await fleet.generate([{"role": "user", "content": f"resting {index}"}])
    assert (_chat_requests(limited), _chat_requests(other)) == (1, 5)
    limiters = [member._state().limiter for member in fleet.members]
    assert (limiters[0].limit, limiters[1].limit) == (4, 8)  # only the 429's endpoint slowed down
    assert fleet.out_of_service() == {}  # resting, not out of service
    await asyncio.sleep(0.7)
    await asyncio.gather(*(fleet.generate([{"role": "user", "content": f"rested {i}"}]) for i in range(4)))
    assert _chat_requests(limited) >= 2
    calls = fleet.endpoint_calls()
    assert (calls[limited.base_url].errors, calls[other.base_url].errors) == (1, 0)


async def test_server_errors_in_a_row_take_an_endpoint_out(stubs: list[StubServer]) -> None:
    sick, healthy, _ = stubs
    fleet = _fleet(
        [sick.base_url, healthy.base_url], server_errors_to_eject=2, probe_interval=5.0, probe_max_interval=5
    )
    sick.fail(503, times=10)
    # One call at a time: each 503 is retried at once on the healthy endpoint, and the second in a
    # row takes the sick one out, so it sees no third call.
    replies = [await fleet.generate([{"role": "user", "content": f"q{i}"}]) for i in range(6)]
    assert [(reply.text, reply.attempts) for reply in replies[:2]] == [("PASS", 2), ("PASS", 2)]
    assert [reply.text for reply in replies] == ["PASS"] * 6
    assert "HTTP 503 2 times in a row" in fleet.out_of_service()[sick.base_url]
    assert _chat_requests(sick) == 2


async def test_a_reply_is_cached_once_whichever_endpoint_served_it(stubs: list[StubServer], tmp_path: Path) -> None:
    first, second, third = stubs
    cache = tmp_path / "c.sqlite3"
    one = _fleet([first.base_url, second.base_url], cache="auto", cache_path=cache)
    answered = await one.generate(PROMPT)
    assert not answered.cached
    # Another fleet of the same model, on other endpoints: the same request is a hit.
    other = _fleet([third.base_url, second.base_url], cache="auto", cache_path=cache)
    hit = await other.generate(PROMPT)
    assert hit.cached and hit.text == "PASS"
    assert _chat_requests(third) == 0 and _chat_requests(first) + _chat_requests(second) == 1
    request = GenerateRequest((ChatMessage("user", "Is the sky blue?"),))
    assert one.cache_key_material(request) == other.cache_key_material(request)
    assert one.cache_key_material(request)["base_url"] == "fleet"
    assert one.forget(answered) is True
