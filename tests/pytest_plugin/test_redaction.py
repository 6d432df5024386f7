"""Secrets planted in headers and bodies never reach the cassette file; the lint finds what is left."""

from __future__ import annotations

import gzip
import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import httpx
import openai
import pytest

from jurybox.pytest_plugin import PLACEHOLDER, CassetteSettings, Redactor, find_secrets, scrub_text, use_cassette
from jurybox.pytest_plugin._lint import lint_file
from jurybox.stubs import StubServer

OPENAI_KEY = "sk-proj-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789"
ANTHROPIC_KEY = "sk-ant-api03-ZyXwVuTsRqPoNmLkJiHgFeDcBa9876543210"
AWS_KEY = "AKIAIOSFODNN7EXAMPLE"
EMAIL = "jane.doe@example.com"
TENANT_TOKEN = "tenant-token-5f2b9c1e"
USER_ID = "user-8c1d2e3f"
SESSION_COOKIE = "session=4b1c7e2a9d0f; Path=/; HttpOnly"
PLANTED = (OPENAI_KEY, ANTHROPIC_KEY, AWS_KEY, EMAIL, TENANT_TOKEN, USER_ID, "4b1c7e2a9d0f")


class LeakyHandler(BaseHTTPRequestHandler):
    """Answers every POST with secrets in a cookie and in a gzip JSON body."""

    def do_POST(self) -> None:
        length = int(self.headers.get("content-length", "0"))
        self.rfile.read(length)
        payload = json.dumps(
            {"echo": f"key {OPENAI_KEY} belongs to {EMAIL}", "user_id": USER_ID, "aws": AWS_KEY}
        ).encode()
        body = gzip.compress(payload)
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Encoding", "gzip")
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Set-Cookie", SESSION_COOKIE)
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:  # keep test output clean
        return


@pytest.fixture
def leaky_server() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), LeakyHandler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


SETTINGS = CassetteSettings(redact_headers=("X-Tenant-Token",), redact_fields=("user_id",))


def post_secrets(url: str) -> httpx.Response:
    return httpx.post(
        f"{url}/v1/chat?key={ANTHROPIC_KEY}",
        headers={
            "Authorization": f"Bearer {OPENAI_KEY}",
            "x-api-key": ANTHROPIC_KEY,
            "X-Tenant-Token": TENANT_TOKEN,
            "Cookie": SESSION_COOKIE,
        },
        json={"prompt": f"my key is {AWS_KEY}, mail me at {EMAIL}", "user_id": USER_ID},
    )


def test_planted_secrets_never_reach_the_cassette_file(tmp_path: Path, leaky_server: str) -> None:
    path = tmp_path / "cassettes" / "leak.yaml"
    with use_cassette(path, record_mode="once", settings=SETTINGS):
        live = post_secrets(leaky_server)
    # The code under test still sees the real response...
    assert live.json()["user_id"] == USER_ID
    # ...but the file on disk has none of the secrets, in headers or bodies.
    text = path.read_text(encoding="utf-8")
    for secret in PLANTED:
        assert secret not in text, f"{secret!r} leaked into the cassette"
    assert PLACEHOLDER in text
    assert "Content-Encoding" not in text  # decompressed at record time, so nothing hides in gzip bytes
    assert lint_file(path) == []


def test_redacted_request_matches_on_replay(tmp_path: Path, leaky_server: str) -> None:
    path = tmp_path / "leak.yaml"
    with use_cassette(path, record_mode="once", settings=SETTINGS):
        post_secrets(leaky_server)
    with use_cassette(path, record_mode="none", settings=SETTINGS) as cassette:
        replayed = post_secrets(leaky_server)
    assert cassette.play_count == 1
    body = replayed.json()
    assert body["user_id"] == PLACEHOLDER
    assert OPENAI_KEY not in body["echo"] and EMAIL not in body["echo"]


def test_sdk_api_key_never_reaches_the_cassette(tmp_path: Path) -> None:
    path = tmp_path / "sdk.yaml"
    with (
        StubServer("openai", reply=f"contact {EMAIL}") as stub,
        use_cassette(path, record_mode="once", settings=CassetteSettings()),
    ):
        client = openai.OpenAI(api_key=OPENAI_KEY, base_url=stub.base_url, max_retries=0)
        reply = client.chat.completions.create(model="gpt-4o-mini", messages=[{"role": "user", "content": "hi"}])
    assert reply.choices[0].message.content == f"contact {EMAIL}"
    text = path.read_text(encoding="utf-8")
    assert OPENAI_KEY not in text and EMAIL not in text
    assert lint_file(path) == []


def test_scrub_text_replaces_each_kind_of_secret() -> None:
    text = f"Authorization: Bearer abc.def.ghi123 {OPENAI_KEY} {ANTHROPIC_KEY} {AWS_KEY} {EMAIL} ghp_{'a' * 36}"
    scrubbed = scrub_text(text)
    assert list(find_secrets(scrubbed)) == []
    assert scrubbed.count(PLACEHOLDER) == 6
    assert "Bearer <REDACTED>" in scrubbed


def test_anthropic_key_is_named_as_such() -> None:
    assert [f.pattern for f in find_secrets(f"x {ANTHROPIC_KEY} y {OPENAI_KEY}")] == ["anthropic-key", "openai-key"]


def test_redactor_rewrites_sse_lines_field_by_field() -> None:
    redactor = Redactor(fields=("user_id",))
    body = f'data: {{"user_id": "{USER_ID}", "text": "hi"}}\n\ndata: [DONE]\n\n'
    redacted = redactor.redact_body(body)
    assert isinstance(redacted, str)
    assert USER_ID not in redacted
    assert redacted.startswith('data: {"user_id":"<REDACTED>"')
    assert "data: [DONE]" in redacted


def test_redactor_leaves_binary_bodies_alone() -> None:
    payload = bytes(range(256))
    assert Redactor().redact_body(payload) == payload
