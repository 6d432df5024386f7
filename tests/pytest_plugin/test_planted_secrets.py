"""Every kind of secret the redaction rules know, planted in a recording: none survives on disk, lint flags each."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import quote_plus

import httpx
import pytest
import typer
from typer.testing import CliRunner

from jurybox._cli import lint
from jurybox.pytest_plugin import ALL_RULES, CassetteSettings, Redactor, RuleSet, use_cassette
from jurybox.pytest_plugin._lint import lint_file
from jurybox.pytest_plugin._patterns import luhn_valid

PEM_BODY = "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7"
PEM = f"-----BEGIN PRIVATE KEY-----\n{PEM_BODY}\n-----END PRIVATE KEY-----"
JWT = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"
SLACK = "xoxb-123456789012-abcdefghijkl"
STRIPE = "sk_live_4eC39HqLyjWDarjtT1zdp7dc"
HF = "hf_AbCdEfGhIjKlMnOpQrStUvWxYz012345"
AZURE = "Zm9vYmFyYmF6cXV4Zm9vYmFyYmF6cXV4Zm9vYmFy"
AMZ_TOKEN = "IQoJb3JpZ2luX2VjEHAaCXVzLWVhc3QtMSJH"
AUTH_TOKEN = "authtok-7f3a9c2e1b"
BASIC = "YWxpY2U6czNjcmV0UHc5"  # alice:s3cretPw9
USERINFO_PASSWORD = "s3cretPw9"
QUERY_PASSWORD = "qpass-8812"
QUERY_SIG = "sigvalue-93jd"
QUERY_TOKEN = "qtoken-4411"
FIELD_SECRETS = {
    "api_key": "apikey-value-5521",
    "password": "hunter2-deep",
    "client_secret": "clientsecret-0042",
    "access_token": "accesstok-7781",
    "refresh_token": "refreshtok-9912",
}
FORM_PASSWORD = "formpass-3321"
CARD = "4111 1111 1111 1111"
SSN = "123-45-6789"
PHONE = "(415) 555-0132"
CUSTOM = "ACME-00112233"

#: Every planted value that must not be in the cassette file.
PLANTED = (
    PEM_BODY,
    JWT,
    SLACK,
    STRIPE,
    HF,
    AZURE,
    AMZ_TOKEN,
    AUTH_TOKEN,
    BASIC,
    USERINFO_PASSWORD,
    QUERY_PASSWORD,
    QUERY_SIG,
    QUERY_TOKEN,
    *FIELD_SECRETS.values(),
    FORM_PASSWORD,
    CARD,
    SSN,
    PHONE,
    CUSTOM,
)


def _prompt() -> str:
    return (
        f"My card is {CARD}, SSN {SSN}, call me at {PHONE}. Key file:\n{PEM}\n"
        f"Session {JWT}; slack {SLACK}; stripe {STRIPE}; hub {HF}; "
        f"DefaultEndpointsProtocol=https;AccountName=acme;AccountKey={AZURE};EndpointSuffix=core.windows.net "
        f"Authorization: Basic {BASIC} hook https://alice:{USERINFO_PASSWORD}@example.com/hook ticket {CUSTOM}"
    )


class EchoHandler(BaseHTTPRequestHandler):
    """Answers with the request body inside a JSON reply, so every secret is in the response too."""

    def do_POST(self) -> None:
        received = self.rfile.read(int(self.headers.get("content-length", "0"))).decode()
        body = json.dumps({"echo": received, "nested": {"auth": {"password": FIELD_SECRETS["password"]}}}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.send_header("X-Auth-Token", AUTH_TOKEN)
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:  # keep test output clean
        return


@pytest.fixture
def server() -> Iterator[str]:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), EchoHandler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()


def _send(host: str) -> None:
    query = f"password={QUERY_PASSWORD}&sig={QUERY_SIG}&token={QUERY_TOKEN}&X-Amz-Security-Token={AMZ_TOKEN}"
    headers = {"X-Amz-Security-Token": AMZ_TOKEN, "X-Auth-Token": AUTH_TOKEN}
    deep = {"config": {"auth": [{"credentials": dict(FIELD_SECRETS)}]}}
    httpx.post(f"http://{host}/v1/chat?{query}", headers=headers, json={"prompt": _prompt(), **deep})
    form = {"user": "alice", "password": FORM_PASSWORD, "note": _prompt()}
    httpx.post(f"http://{host}/login", data=form, headers=headers)


def test_no_planted_secret_survives_a_recording(tmp_path: Path, server: str) -> None:
    path = tmp_path / "planted.yaml"
    settings = CassetteSettings(redact_patterns=(r"ACME-\d{8}",))
    # Record mode "all" (how CI re-records) turns PII redaction on without being asked.
    with use_cassette(path, record_mode="all", settings=settings):
        _send(server)
    text = path.read_text(encoding="utf-8")
    # Each in plain text, JSON-escaped and form-encoded (the second request is a form).
    forms = {secret: (secret, json.dumps(secret)[1:-1], quote_plus(secret)) for secret in PLANTED}
    leaked = [secret for secret, spellings in forms.items() if any(spelling in text for spelling in spellings)]
    assert leaked == []
    assert "-----BEGIN PRIVATE KEY-----" not in text
    rules = RuleSet.build(patterns=settings.redact_patterns, pii=True)
    assert lint_file(path, rules=rules) == []


@pytest.mark.parametrize("mode", ["once", "new_episodes", "all", "rewrite"])
def test_pii_is_redacted_in_every_record_mode_unless_turned_off(tmp_path: Path, server: str, mode: str) -> None:
    # Changed deliberately (issue 32): PII used to be kept in record modes once and new_episodes.
    path = tmp_path / "default.yaml"
    with use_cassette(path, record_mode=mode, settings=CassetteSettings()):
        _send(server)
    text = path.read_text(encoding="utf-8")
    assert SSN not in text and PHONE not in text and CARD not in text
    assert STRIPE not in text and FIELD_SECRETS["client_secret"] not in text
    with use_cassette(tmp_path / "off.yaml", record_mode=mode, settings=CassetteSettings(redact_pii=False)):
        _send(server)
    off = (tmp_path / "off.yaml").read_text(encoding="utf-8")
    assert SSN in off  # personal data is the test's own business once redact_pii = false
    assert STRIPE not in off and FIELD_SECRETS["client_secret"] not in off


def test_a_recording_made_without_pii_redaction_replays_with_it(tmp_path: Path, server: str) -> None:
    path = tmp_path / "kept.yaml"
    with use_cassette(path, record_mode="once", settings=CassetteSettings(redact_pii=False)):
        _send(server)
    with use_cassette(path, record_mode="none", settings=CassetteSettings()) as cassette:
        _send(server)
    assert cassette.play_count == 2


def test_a_recording_made_with_pii_redaction_replays_without_it(tmp_path: Path, server: str) -> None:
    path = tmp_path / "replay.yaml"
    with use_cassette(path, record_mode="all", settings=CassetteSettings()):
        _send(server)
    with use_cassette(path, record_mode="none", settings=CassetteSettings(redact_pii=False)) as cassette:
        _send(server)
    assert cassette.play_count == 2


#: One line per kind in a hand-written cassette, and the pattern name lint must give it.
HAND_WRITTEN = {
    "url-userinfo": f"uri: https://alice:{USERINFO_PASSWORD}@api.example.com/v1",
    "named-secret": f"uri: https://api.example.com/v1?password={QUERY_PASSWORD}&sig={QUERY_SIG}",
    "query-secret": f"uri: https://api.example.com/v1?token={QUERY_TOKEN}",
    "private-key": "string: '-----BEGIN RSA PRIVATE KEY-----\\nMIIEowIBAAKCAQEA'",
    "jwt": f"string: 'session {JWT}'",
    "slack-token": f"string: 'slack {SLACK}'",
    "stripe-key": f"string: 'stripe {STRIPE}'",
    "huggingface-token": f"string: 'hub {HF}'",
    "basic-credentials": f"string: 'Authorization: Basic {BASIC}'",
    "card-number": f"string: 'card {CARD}'",
    "us-ssn": f"string: 'ssn {SSN}'",
    "phone-number": f"string: 'call {PHONE}'",
}
HAND_WRITTEN_JSON = {
    "api_key": FIELD_SECRETS["api_key"],
    "password": FIELD_SECRETS["password"],
    "client_secret": FIELD_SECRETS["client_secret"],
    "access_token": FIELD_SECRETS["access_token"],
    "refresh_token": FIELD_SECRETS["refresh_token"],
    "AccountKey": AZURE,
}


def test_lint_flags_each_kind_in_a_hand_written_cassette(tmp_path: Path) -> None:
    lines = ["interactions:", "- request:", "    headers:", "      X-Amz-Security-Token:"]
    secret_lines = [len(lines) + 1]
    lines += [f"      - {AMZ_TOKEN}", "      X-Auth-Token:", f"      - {AUTH_TOKEN}"]
    secret_lines.append(len(lines))
    for line in HAND_WRITTEN.values():
        lines.append(f"    {line}")
        secret_lines.append(len(lines))
    for name, value in HAND_WRITTEN_JSON.items():
        lines.append(f"    body_{name}: '{json.dumps({'outer': {'inner': [{name: value}]}})}'")
        secret_lines.append(len(lines))
    path = tmp_path / "hand.yaml"
    path.write_text("\n".join(lines) + "\nversion: 1\n", encoding="utf-8")
    findings = lint_file(path)
    assert set(secret_lines) <= {finding.line for finding in findings}
    names = {finding.pattern for finding in findings}
    assert set(HAND_WRITTEN) <= names
    assert {"header x-amz-security-token", "header x-auth-token"} <= names


def test_luhn_rejects_a_near_miss_card_number() -> None:
    assert luhn_valid(CARD)
    assert not luhn_valid("4111 1111 1111 1112")
    assert list(ALL_RULES.find("order 4111 1111 1111 1112")) == []


def test_redactor_keeps_untouched_json_byte_for_byte() -> None:
    body = '{"model": "m",   "messages": [{"role": "user", "content": "hi"}]}'
    assert Redactor().redact_body(body) == body
    assert Redactor().redact_body('{"a": {"password": "x1y2z3"}}') == '{"a":{"password":"<REDACTED>"}}'


def test_lint_cassettes_applies_the_projects_own_rules(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    app = typer.Typer()
    app.callback()(lambda: None)
    lint.register(app)
    (tmp_path / "pyproject.toml").write_text(
        "[tool.jurybox.cassettes]\nredact_patterns = ['ACME-[0-9]{8}']\nredact_fields = ['tenant']\n", encoding="utf-8"
    )
    (tmp_path / "c.yaml").write_text(
        f'interactions:\n- request:\n    body: \'{{"tenant": "blue-42", "ticket": "{CUSTOM}"}}\'\nversion: 1\n',
        encoding="utf-8",
    )
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(app, ["lint-cassettes", "c.yaml"])
    assert result.exit_code == 1, result.output
    assert "c.yaml:3: custom:" in result.output and "c.yaml:3: custom-field:" in result.output
