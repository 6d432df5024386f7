"""Redaction keeps cassettes replayable: redacted recordings match, and so do recordings made with fewer rules.

vcrpy redacts each live request before matching it, so a request matches its
own redacted recording. A cassette written by an older jurybox (or with
``redact_pii = false``) still holds values today's rules replace: a webhook
token in the path, a random query value, a phone number in the prompt, a
``newPassword`` field. Matching compares such requests again with every rule
applied to both sides, so they still replay.
"""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest
import yaml

from jurybox.pytest_plugin import PLACEHOLDER, CassetteSettings, use_cassette

WEBHOOK = "https://hooks.slack.com/services/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"
SIGNED = "https://storage.example.com/v1/files/report.pdf?X-Goog-Signature=8f2a9c1e4b5d6f7a8b9c0d1e2f3a4b5c&expires=60"
BODY = {"messages": [{"role": "user", "content": "Call me on +44 20 7946 0958"}], "user": {"newPassword": "hunter2!"}}


def _cassette(path: Path, uri: str, body: dict[str, object]) -> None:
    """A cassette as an older recorder wrote it: the request exactly as sent."""
    interaction = {
        "request": {"body": json.dumps(body), "headers": {}, "method": "POST", "uri": uri},
        "response": {
            "body": {"string": json.dumps({"ok": True})},
            "headers": {"Content-Type": ["application/json"]},
            "status": {"code": 200, "message": "OK"},
        },
    }
    path.write_text(yaml.safe_dump({"interactions": [interaction], "version": 1}), encoding="utf-8")


@pytest.mark.parametrize("uri", [WEBHOOK, SIGNED])
def test_a_cassette_recorded_with_fewer_rules_still_replays(tmp_path: Path, uri: str) -> None:
    path = tmp_path / "old.yaml"
    _cassette(path, uri, BODY)
    with use_cassette(path, record_mode="none", settings=CassetteSettings()) as cassette:
        response = httpx.post(uri, json=BODY)
    assert response.json() == {"ok": True}
    assert cassette.play_count == 1


def test_a_request_differing_only_in_a_secret_matches_its_recording(tmp_path: Path) -> None:
    # A key rotated since recording, in the query and in the body: both sides redact to the same request.
    path = tmp_path / "rotated.yaml"
    _cassette(path, "https://api.example.com/v1?key=old-key-123", {"api_key": "old-key-123", "prompt": "hi"})
    with use_cassette(path, record_mode="none", settings=CassetteSettings()) as cassette:
        httpx.post("https://api.example.com/v1?key=new-key-456", json={"api_key": "new-key-456", "prompt": "hi"})
    assert cassette.play_count == 1


def test_a_different_prompt_still_misses(tmp_path: Path) -> None:
    from vcr.errors import CannotOverwriteExistingCassetteException

    path = tmp_path / "prompt.yaml"
    _cassette(path, "https://api.example.com/v1", BODY)
    other = {**BODY, "messages": [{"role": "user", "content": "Call me on +44 20 7946 0958 tomorrow"}]}
    with (
        use_cassette(path, record_mode="none", settings=CassetteSettings()),
        pytest.raises(CannotOverwriteExistingCassetteException),
    ):
        httpx.post("https://api.example.com/v1", json=other)


def test_recording_replaces_the_webhook_token_and_replays_it(tmp_path: Path) -> None:
    path = tmp_path / "new.yaml"
    _cassette(path, WEBHOOK, BODY)
    # Re-record in mode "all" through a transport that never leaves the process.
    transport = httpx.MockTransport(lambda request: httpx.Response(200, json={"ok": True}))
    with use_cassette(path, record_mode="all", settings=CassetteSettings()):
        httpx.Client(transport=transport).post(WEBHOOK, json=BODY)
    text = path.read_text(encoding="utf-8")
    assert "aB3dE5gH7jK9mN1pQ3rS5tU7" not in text and "7946 0958" not in text and "hunter2!" not in text
    assert f"services/{PLACEHOLDER}" in text
    with use_cassette(path, record_mode="none", settings=CassetteSettings()) as cassette:
        httpx.post(WEBHOOK, json=BODY)
    assert cassette.play_count == 1
