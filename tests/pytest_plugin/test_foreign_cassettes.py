"""Cassettes recorded by other projects replay through jurybox's cassette machinery.

Every recorded request of each of the 33 cassettes in tests/data/cassettes/foreign
(copies of shared/realdata; sources in tests/data/SOURCES.md) is sent again with
httpx under ``use_cassette`` in record mode ``none``: each must be answered from
the cassette with the recorded status and body. Older SDKs' requests that differ
only in empty defaults or a volatile query parameter match once
``ignore_empty_fields`` / ``ignore_query_params`` say so, and not before.
"""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml
from vcr.errors import CannotOverwriteExistingCassetteException

from jurybox.pytest_plugin import CassetteSettings, use_cassette


def missed() -> Any:
    """A request the cassette cannot answer: vcrpy refuses it in record mode ``none``."""
    return pytest.raises(CannotOverwriteExistingCassetteException)


FOREIGN = Path(__file__).parents[1] / "data" / "cassettes" / "foreign"
CASSETTES = sorted(FOREIGN.rglob("*.yaml"))


def _request_body(request: dict[str, Any]) -> bytes | None:
    if "parsed_body" in request:
        return json.dumps(request["parsed_body"]).encode()
    body = request.get("body")
    if isinstance(body, dict):
        body = body.get("string")
    return body.encode() if isinstance(body, str) else body


def _status(response: dict[str, Any]) -> int:
    status = response.get("status")
    return int(status["code"]) if isinstance(status, dict) else int(response.get("status_code", 0))


def _headers(request: dict[str, Any]) -> dict[str, str]:
    headers = {k: (v[0] if isinstance(v, list) else v) for k, v in (request.get("headers") or {}).items()}
    return {k: str(v) for k, v in headers.items() if k.lower() not in ("content-length", "host")}


def test_all_33_are_here() -> None:
    assert len(CASSETTES) == 33


@pytest.mark.parametrize("cassette", CASSETTES, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_every_recorded_request_is_answered_from_the_cassette(cassette: Path, tmp_path: Path) -> None:
    copy = tmp_path / cassette.name
    shutil.copy(cassette, copy)
    interactions = yaml.safe_load(cassette.read_text())["interactions"]
    with use_cassette(copy, record_mode="none", settings=CassetteSettings()) as recorded, httpx.Client() as client:
        for interaction in interactions:
            request = interaction["request"]
            response = client.request(
                request["method"], request["uri"], content=_request_body(request), headers=_headers(request)
            )
            assert response.status_code == _status(interaction["response"])
            text = response.read()
            assert text or interaction["response"].get("body") in (None, {"string": ""}, "")
        assert recorded.play_count == len(interactions)


def test_a_parsed_body_cassette_replays_the_reply_the_sdk_reads(tmp_path: Path) -> None:
    openai = pytest.importorskip("openai")
    name = "pydantic-ai__ollama_local_native_output_json_schema__parsed_body_format.yaml"
    copy = tmp_path / name
    shutil.copy(FOREIGN / "errors_and_variants" / name, copy)
    request = yaml.safe_load(copy.read_text())["interactions"][0]["request"]["parsed_body"]
    client = openai.OpenAI(base_url="http://localhost:11434/v1", api_key="ollama", max_retries=0)
    with use_cassette(copy, record_mode="none", settings=CassetteSettings()):
        completion = client.chat.completions.create(**request)
    assert json.loads(completion.choices[0].message.content or "") == {"city": "Paris", "country": "France"}


def _older_sdk_cassette(tmp_path: Path) -> Path:
    """One recorded call without the defaults a newer SDK sends, on a URL with ``?beta=true``."""
    body = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
    reply = {"id": "r", "object": "chat.completion", "choices": [{"index": 0, "message": {"role": "assistant",
             "content": "hello"}, "finish_reason": "stop"}]}  # fmt: skip
    cassette = {
        "version": 1,
        "interactions": [
            {
                "request": {
                    "method": "POST",
                    "uri": "https://api.example.com/v1/chat/completions?beta=true",
                    "body": json.dumps(body),
                    "headers": {"content-type": ["application/json"]},
                },
                "response": {
                    "status": {"code": 200, "message": "OK"},
                    "headers": {"content-type": ["application/json"], "content-encoding": ["gzip"]},
                    "body": {"string": gzip.compress(json.dumps(reply).encode())},
                },
            }
        ],
    }
    path = tmp_path / "older.yaml"
    path.write_text(yaml.safe_dump(cassette))
    return path


def _newer_sdk_call(client: httpx.Client) -> httpx.Response:
    body = {"model": "m", "messages": [{"role": "user", "content": "hi"}], "tools": None, "stream_options": {}}
    return client.post("https://api.example.com/v1/chat/completions", json=body)


def test_strict_by_default_and_lenient_when_configured(tmp_path: Path) -> None:
    cassette = _older_sdk_cassette(tmp_path)
    strict = CassetteSettings()
    with use_cassette(cassette, record_mode="none", settings=strict), httpx.Client() as client, missed() as miss:
        _newer_sdk_call(client)
    assert "older.yaml" in str(miss.value)
    lenient = CassetteSettings(ignore_empty_fields=True, ignore_query_params=("beta",))
    with use_cassette(cassette, record_mode="none", settings=lenient), httpx.Client() as client:
        answered = _newer_sdk_call(client)
    assert answered.status_code == 200 and answered.json()["choices"][0]["message"]["content"] == "hello"
    only_empty = CassetteSettings(ignore_empty_fields=True)
    with use_cassette(cassette, record_mode="none", settings=only_empty), httpx.Client() as client, missed():
        _newer_sdk_call(client)  # the query still differs


def test_ignore_empty_fields_never_ignores_a_real_difference(tmp_path: Path) -> None:
    cassette = _older_sdk_cassette(tmp_path)
    lenient = CassetteSettings(ignore_empty_fields=True, ignore_query_params=("beta",))
    body = {"model": "m", "messages": [{"role": "user", "content": "hi there"}], "tools": None}
    with use_cassette(cassette, record_mode="none", settings=lenient), httpx.Client() as client:
        with missed():
            client.post("https://api.example.com/v1/chat/completions", json=body)
        with missed():  # false and 0 are values, not empty defaults
            client.post(
                "https://api.example.com/v1/chat/completions",
                json={"model": "m", "messages": [{"role": "user", "content": "hi"}], "stream": False},
            )
