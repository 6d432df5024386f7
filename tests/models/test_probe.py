"""Checking a model server before a run, and provider errors as one line a person can act on."""

from __future__ import annotations

import asyncio
import errno
import socket
import ssl
from collections.abc import Iterator

import pytest

from jurybox.core import error_reason, printable_url
from jurybox.models import (
    ModelConnectionError,
    ModelTimeoutError,
    ProbeTarget,
    ProviderError,
    RateLimitError,
    RequestRejectedError,
    RetryPolicy,
    get_model,
    probe,
    probe_all,
)
from jurybox.stubs import StubServer


async def _no_sleep(_seconds: float) -> None:
    return None


@pytest.fixture
def silent_port() -> Iterator[int]:
    """A port that accepts connections (the kernel's backlog) and never answers."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(8)
    try:
        yield sock.getsockname()[1]
    finally:
        sock.close()


# ------------------------------------------------------------------ probing a server


def test_a_refused_connection_names_the_url_and_what_to_check(closed_port: int) -> None:
    model = get_model(f"openai:m@http://127.0.0.1:{closed_port}/v1", cache=False)
    problem = asyncio.run(model.check_endpoint())
    assert problem == f"connection refused at http://127.0.0.1:{closed_port}/v1: is the server running?"


def test_a_server_that_never_answers_times_out_with_the_wait_named(silent_port: int) -> None:
    target = ProbeTarget(f"http://127.0.0.1:{silent_port}/v1", f"http://127.0.0.1:{silent_port}/v1/models")
    problem = asyncio.run(probe(target, timeout=0.2))
    assert problem is not None
    assert problem.startswith(f"timed out after 0.2s at http://127.0.0.1:{silent_port}/v1")


@pytest.mark.parametrize(
    ("provider", "variable", "path"),
    [("openai", "OPENAI_API_KEY", "/v1/models"), ("anthropic", "ANTHROPIC_API_KEY", "/v1/models")],
)
def test_a_refused_key_names_the_variable_to_check(provider: str, variable: str, path: str) -> None:
    with StubServer(provider, reply="ok") as stub:
        stub.fail(401, times=1)
        model = get_model(f"{provider}:m", base_url=stub.base_url, api_key="sk-wrong-key", cache=False)
        problem = asyncio.run(model.check_endpoint())
        sent = stub.requests[-1]
    assert problem == f"401 Unauthorized at {model.printable_url}: check {variable}"
    assert "sk-wrong-key" not in problem
    assert (sent.method, sent.path) == ("GET", path)
    # The key goes where the provider reads it, so a wrong key is what the check finds.
    assert "sk-wrong-key" in (sent.headers.get("authorization", "") + sent.headers.get("x-api-key", ""))


def test_a_server_that_answers_passes_even_without_a_model_list() -> None:
    with StubServer("openai", reply="ok") as stub:  # the stub has no GET /models: a 404
        model = get_model("openai:m", base_url=stub.base_url, cache=False)
        assert asyncio.run(model.check_endpoint()) is None
        assert stub.requests[-1].path == "/v1/models"


def test_ollama_is_checked_with_its_model_list() -> None:
    with StubServer("ollama", reply="ok") as stub:
        model = get_model("ollama:llama3.1", base_url=stub.base_url, cache=False)
        assert asyncio.run(model.check_endpoint()) is None
        assert (stub.requests[-1].method, stub.requests[-1].path) == ("GET", "/api/tags")


def test_probe_all_checks_each_server_once_and_keeps_only_failures(closed_port: int) -> None:
    dead = ProbeTarget(f"http://127.0.0.1:{closed_port}", f"http://127.0.0.1:{closed_port}/models", label="a")
    with StubServer("openai", reply="ok") as stub:
        alive = ProbeTarget(stub.base_url, f"{stub.base_url}/models", label="b")
        failed = asyncio.run(probe_all([dead, alive, dead]))
        assert len(stub.requests) == 1
    assert [(target.label, reason.split(" at ")[0]) for target, reason in failed] == [("a", "connection refused")]


def test_urls_are_shown_without_passwords_or_query_keys() -> None:
    assert printable_url("https://me:secret@host.example:8443/v1?api-key=abc#m") == "https://host.example:8443/v1"
    model = get_model("openai:m@http://me:secret@127.0.0.1:9/v1", cache=False)
    assert model.printable_url == "http://127.0.0.1:9/v1"
    assert "secret" not in (model.probe_target().url + str(model.probe_target().label))


# ------------------------------------------------------------------ one-line reasons


def test_a_failed_call_reads_as_one_line_naming_url_and_retries(closed_port: int) -> None:
    url = f"http://127.0.0.1:{closed_port}/v1"
    model = get_model(f"openai:m@{url}", cache=False, retry=RetryPolicy(max_retries=2, sleep=_no_sleep))
    with pytest.raises(ModelConnectionError) as caught:
        asyncio.run(model.generate([{"role": "user", "content": "hi"}]))
    line = error_reason(caught.value)
    assert line == f"connection refused at {url} after 2 retries: is the server running?"
    assert "ClientConnectorError" not in line and "\n" not in line
    assert caught.value.__cause__ is not None  # the transport's own error stays for the detail


def test_a_rate_limit_names_status_and_retries() -> None:
    with StubServer("openai", reply="ok") as stub:
        stub.fail(429, times=3)
        model = get_model("openai:m", base_url=stub.base_url, cache=False, retry=RetryPolicy(2, sleep=_no_sleep))
        with pytest.raises(RateLimitError) as caught:
            asyncio.run(model.generate([{"role": "user", "content": "hi"}]))
        url = stub.base_url
    assert error_reason(caught.value).startswith(f"HTTP 429 rate limited: stub injected HTTP 429 at {url}")
    assert error_reason(caught.value).endswith("after 2 retries")


def test_a_slow_server_reads_as_timed_out_after_the_timeout(silent_port: int) -> None:
    url = f"http://127.0.0.1:{silent_port}/v1"
    model = get_model(f"openai:m@{url}", cache=False, timeout=0.2, retry=RetryPolicy(0, sleep=_no_sleep))
    with pytest.raises(ModelTimeoutError) as caught:
        asyncio.run(model.generate([{"role": "user", "content": "hi"}]))
    assert error_reason(caught.value) == f"timed out after 0.2s at {url}"


def test_invalid_json_from_the_model_says_so() -> None:
    with StubServer("openai", reply="ok") as stub:
        stub.fail(200, body="{not json", times=1)
        model = get_model("openai:m", base_url=stub.base_url, cache=False, retry=RetryPolicy(0, sleep=_no_sleep))
        with pytest.raises(ProviderError) as caught:
            asyncio.run(model.generate([{"role": "user", "content": "hi"}]))
    assert error_reason(caught.value).startswith("invalid JSON from the model")


def test_a_refused_key_never_quotes_the_providers_message() -> None:
    error = RequestRejectedError(
        "rejected", provider="openai", status=401, provider_message="Incorrect API key provided: sk-abc***xyz"
    )
    error.url = "https://api.openai.com/v1"
    assert error_reason(error) == "HTTP 401 Unauthorized at https://api.openai.com/v1: check OPENAI_API_KEY"


def test_a_bad_request_quotes_the_providers_words_once() -> None:
    error = RequestRejectedError("x", provider="openai", status=400, provider_message="max_tokens is too large")
    assert error_reason(error) == "HTTP 400 Bad Request: max_tokens is too large"


@pytest.mark.parametrize(
    ("error", "line"),
    [
        (
            ConnectionRefusedError(errno.ECONNREFUSED, "Connect call failed"),
            "connection refused at U: is the server running?",
        ),
        (
            socket.gaierror(-2, "Name or service not known"),
            "DNS lookup failed (unknown host) at U: check the host name",
        ),
        (ConnectionResetError(104, "reset"), "connection dropped by the server at U"),
        (ssl.SSLError(1, "wrong version number"), "TLS handshake failed"),
        (TimeoutError(), "timed out (Cannot connect to host) at U"),
    ],
)
def test_operating_system_failures_are_named_through_wrappers(error: BaseException, line: str) -> None:
    try:
        try:
            raise error
        except OSError as inner:
            raise RuntimeError("Cannot connect to host") from inner
    except RuntimeError as wrapped:
        assert error_reason(wrapped, url="U").startswith(line)


def test_anything_else_is_its_type_and_first_line_clipped() -> None:
    assert error_reason(ValueError("bad thing\nsecond line")) == "ValueError: bad thing"
    assert error_reason(KeyError()) == "KeyError"
    assert len(error_reason(ValueError("x" * 5000))) <= 300
