"""Fuzz: mutated and random cassettes through the real replay path: a reply, a miss, or one CassetteError.

Examples are the cassette mutated as text (YAML broken or bent), mutated as data
(a field deleted or given a value of another kind, then written as YAML) and
random text. Each is written to a file and replayed as a test would: ``use_cassette``
in record mode ``none`` and the recorded request sent again with httpx, the reply
read to the end (gzip decoded, streamed or not); the stub server's reader
(``jurybox.stubs.load_cassette``) reads the same file. The only outcomes allowed:
the reply, vcrpy's "not on cassette" miss (the request no longer matches), or a
``CassetteError`` whose message starts with the file's name. Anything else (a
TypeError, KeyError or yaml error from inside vcrpy or httpx) fails the test.
"""

from __future__ import annotations

import base64
import gzip
import json
import random
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from vcr.errors import CannotOverwriteExistingCassetteException

from jurybox.inputs import CassetteError
from jurybox.pytest_plugin import CassetteSettings, use_cassette
from jurybox.stubs import load_cassette

FUZZ = settings(
    max_examples=1000,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
URI = "https://api.example.com/v1/chat/completions?key=<REDACTED>"
REQUEST = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
STREAM_REQUEST = {**REQUEST, "stream": True}
GZIPPED = base64.b64encode(gzip.compress(b'{"choices": [{"message": {"content": "ok"}}]}')).decode()
CASSETTE = f"""\
interactions:
- request:
    body: '{json.dumps(REQUEST)}'
    headers:
      authorization:
      - <REDACTED>
      content-type:
      - application/json
    method: POST
    uri: {URI}
  response:
    body:
      string: !!binary |
        {GZIPPED}
    headers:
      Content-Encoding:
      - gzip
      Content-Type:
      - application/json
    status:
      code: 200
      message: OK
- request:
    body: '{json.dumps(STREAM_REQUEST)}'
    headers: {{content-type: [application/json]}}
    method: POST
    uri: {URI}
  response:
    body: {{string: "data: {{\\"x\\": 1}}\\n\\ndata: [DONE]\\n\\n"}}
    headers: {{Content-Type: [text/event-stream]}}
    status: {{code: 200, message: OK}}
version: 1
"""
TOKENS = [
    "~", "null", "[]", "{}", "[", "]", "{", "}", ": ", "- ", "-1", "0", "999", "1e999", "true", "'", '"', "\n", "  ",
    "!!binary ", "!!str ", "!!int ", "!!python/tuple ", "!!python/object/apply:os.system ", "&a ", "*a", "? ",
    "gzip", "deflate", "br", "http://", "ftp://", "é", "\\u00e9", "\t", "x" * 80, "status", "code", "headers",
    "body", "string", "request", "response", "interactions", "uri", "method", "version", "message",
]  # fmt: skip


def _mutate(seed: int) -> str:
    chance = random.Random(seed)
    text = CASSETTE
    for _ in range(chance.randint(1, 4)):
        start = chance.randint(0, len(text))
        end = min(len(text), start + chance.randint(0, 30))
        piece = chance.choice(TOKENS)
        kind = chance.choice(["insert", "delete", "replace", "duplicate"])
        if kind == "insert":
            text = text[:start] + piece + text[start:]
        elif kind == "delete":
            text = text[:start] + text[end:]
        elif kind == "replace":
            text = text[:start] + piece + text[end:]
        else:
            text = text[:end] + text[start:end] + text[end:]
    return text


VALUES = [
    None,
    0,
    -1,
    99999,
    1.5,
    True,
    "",
    "x",
    "é",
    "\u0000",
    [],
    {},
    ["a"],
    [1],
    {"a": 1},
    {"string": 1},
    b"\x1f\x8b",
]


def _mutate_data(seed: int) -> str:
    """The cassette as data, one to three values deleted or replaced by a value of another kind, as YAML."""
    chance = random.Random(seed)
    data = yaml.load(CASSETTE, Loader=yaml.SafeLoader)
    for _ in range(chance.randint(1, 3)):
        parent, key = _somewhere(data, chance)
        if parent is None:
            data = chance.choice(VALUES)
        elif chance.random() < 0.3 and isinstance(parent, dict):
            del parent[key]
        else:
            parent[key] = chance.choice(VALUES)
    return yaml.safe_dump(data)


def _somewhere(data: Any, chance: random.Random) -> tuple[Any, Any]:
    """A random (container, key) in ``data``, or (None, None) for the top."""
    parent, key, value = None, None, data
    while isinstance(value, dict | list) and value and chance.random() < 0.85:
        parent = value
        key = chance.choice(list(value)) if isinstance(value, dict) else chance.randrange(len(value))
        value = value[key]
    return parent, key


cassettes = st.integers(0, 2**32 - 1).map(_mutate) | st.integers(0, 2**32 - 1).map(_mutate_data) | st.text(max_size=300)


def _names_the_file(error: CassetteError, path: Path) -> None:
    assert str(error).startswith(str(path)), error
    assert error.problem


def _replay(path: Path) -> None:
    with use_cassette(path, record_mode="none", settings=CassetteSettings()), httpx.Client() as client:
        for body in (REQUEST, STREAM_REQUEST):
            try:
                reply = client.post(URI, json=body, headers={"authorization": "Bearer k"})
            except CannotOverwriteExistingCassetteException:
                continue  # a miss: the mutated cassette no longer holds this request
            reply.read()
            assert 100 <= reply.status_code <= 599


def test_the_unmutated_cassette_replays_both_requests(tmp_path: Path) -> None:
    path = tmp_path / "cassette.yaml"
    path.write_text(CASSETTE, encoding="utf-8")
    with use_cassette(path, record_mode="none", settings=CassetteSettings()), httpx.Client() as client:
        assert client.post(URI, json=REQUEST).json() == {"choices": [{"message": {"content": "ok"}}]}
        assert client.post(URI, json=STREAM_REQUEST).text.startswith("data: ")
    assert [r.status for r in load_cassette(path)] == [200, 200]


@FUZZ
@given(text=cassettes)
def test_replay_gives_a_reply_a_miss_or_one_cassette_error(tmp_path: Path, text: str) -> None:
    path = tmp_path / "cassette.yaml"
    path.write_text(text, encoding="utf-8", errors="surrogatepass")
    try:
        _replay(path)
    except CassetteError as error:
        _names_the_file(error, path)
    try:
        load_cassette(path)
    except CassetteError as error:
        _names_the_file(error, path)


@pytest.mark.parametrize(
    ("text", "field"),
    [
        ("interactions: 3\n", "interactions"),
        ("interactions: [{request: {}, response: {}}]\nversion: 1\n", "interactions[0].request"),
        ("version: 2\ninteractions: []\n", "version"),
        ("[1, 2]\n", ""),
        (CASSETTE.replace("code: 200", "code: abc", 1), "interactions[0].response.status.code"),
        (CASSETTE.replace("      - gzip", "      - deflate", 1).replace(GZIPPED, "bm90IGd6aXA="), "body.string"),
        (CASSETTE.replace(f"uri: {URI}", "uri: ftp://x/y", 1), "interactions[0].request.uri"),
        (CASSETTE.replace("message: OK", "message: Okay \u00e9", 1), "interactions[0].response.status.message"),
    ],
    ids=["not-a-list", "empty-request", "version", "not-a-mapping", "status", "not-gzip", "scheme", "reason"],
)
def test_a_malformed_cassette_is_one_error_naming_file_line_and_field(tmp_path: Path, text: str, field: str) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(CassetteError) as caught:
        _replay(path)
    message = str(caught.value)
    assert message.startswith(f"{path}:")
    assert field in message
    assert len(message.splitlines()) == 1


def test_a_cassette_that_is_not_utf8_is_a_cassette_error_not_an_empty_cassette(tmp_path: Path) -> None:
    path = tmp_path / "latin1.yaml"
    path.write_bytes(CASSETTE.replace("OK", "\xe9t\xe9").encode("latin-1"))
    with pytest.raises(CassetteError, match=r"latin1\.yaml:22: not utf-8 text"):
        _replay(path)
