"""Generated secrets, in every name spelling and every place, never reach a recorded cassette (issue 32).

Hypothesis draws a fake (43 vendor key shapes, passwords, five kinds of personal
data, see secret_corpus.py), a credential name in any naming style and a place
(request header, query, JSON field at depth, form field, a cookie in a body, a
prompt, a reply, a response header). The request goes through ``use_cassette``
(what the ``cassette`` marker runs) to a local server that echoes everything
back; the file on disk must hold no piece of the secret, and the lint must find
nothing left. Examples are derandomized: the same inputs on every run. A last
test sends a batch of every kind through the real pytest plugin (pytester) and
replays it offline.
"""

from __future__ import annotations

import itertools
import json
import random
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from tempfile import TemporaryDirectory
from typing import Any, ClassVar

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from secret_corpus import (
    NAMED_PROSE,
    PII_KINDS,
    PROSE,
    STYLES,
    VENDOR_KINDS,
    Fake,
    credential_names,
    fake,
    leaked,
    password,
    password_fakes,
    pii_fakes,
    styled,
    vendor_fakes,
)

from jurybox.pytest_plugin import CassetteSettings, use_cassette
from jurybox.pytest_plugin._lint import lint_file

pytest_plugins = ["pytester"]

EXAMPLES = settings(
    max_examples=120, derandomize=True, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


class EchoHandler(BaseHTTPRequestHandler):
    """Answers with everything it received, as a chat reply in JSON.

    A reply or a response header to plant is set in ``planted`` under a case number the
    request names (``x-case``), so it reaches the response without passing through the request.
    """

    planted: ClassVar[dict[str, dict[str, str]]] = {}

    def do_POST(self) -> None:
        received = self.rfile.read(int(self.headers.get("content-length", "0"))).decode()
        case = self.planted.get(self.headers.get("x-case", ""), {})
        body = json.dumps(
            {
                "choices": [{"message": {"role": "assistant", "content": case.get("reply", "ok")}}],
                "echo": {"path": self.path, "body": received, "headers": dict(self.headers)},
            }
        ).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        if "header" in case:
            self.send_header(case["header"], case["value"])
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:  # keep test output clean
        return


def planted_in_response(**case: str) -> Request:
    """A request whose response carries ``case`` (``reply=...`` or ``header=..., value=...``)."""
    number = str(len(EchoHandler.planted))
    EchoHandler.planted[number] = case
    return {"headers": {"x-case": number}}


#: One client for every request: building one (its TLS context) costs more than a recording.
CLIENT = httpx.Client(timeout=10)


@pytest.fixture(scope="module")
def echo() -> Iterator[str]:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), EchoHandler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()


Request = dict[str, Any]


NAMED_PLACES = ("header", "query", "json-deep", "form", "cookie-in-body", "prompt", "reply", "response-header")
BARE_PLACES = ("prompt", "reply", "json-field", "query", "form", "header")


def named_place(place: str, name: str, value: str, template: str) -> Request:
    """The request that puts ``value`` under ``name`` in ``place``."""
    prose = template.format(name=name, value=value)
    if place == "header":
        return {"headers": {name: value.replace("\n", " ")}}  # a header is one line
    if place == "query":
        return {"params": {name: value}}
    if place == "json-deep":
        return {"json": {"config": {"auth": [{"region": "eu", name: value}]}}}
    if place == "form":
        return {"data": {"user": "alice", name: value}}
    if place == "cookie-in-body":
        return {"json": {"note": f"Cookie: theme=dark; {name}={value}; lang=en"}}
    if place == "prompt":
        return {"json": {"messages": [{"role": "user", "content": prose}]}}
    if place == "reply":
        return planted_in_response(reply=prose)
    return planted_in_response(header=name, value=value.replace("\n", " "))


def bare_place(place: str, value: str, template: str) -> Request:
    """The request that puts ``value`` in ``place`` with no name to say what it is."""
    prose = template.format(value=value)
    if place == "prompt":
        return {"json": {"messages": [{"role": "user", "content": prose}]}}
    if place == "reply":
        return planted_in_response(reply=prose)
    if place == "json-field":
        return {"json": {"metadata": {"note": value}}}
    if place == "query":
        return {"params": {"q": value}}
    if place == "form":
        return {"data": {"comment": value}}
    return {"headers": {"x-note": prose.replace("\n", " ")}}


def record(url: str, request: Request, folder: Path, settings_: CassetteSettings | None = None) -> str:
    """Record one request in a fresh cassette; the cassette's text."""
    path = folder / "c.yaml"
    path.unlink(missing_ok=True)
    with use_cassette(path, record_mode="once", settings=settings_ or CassetteSettings()):
        response = CLIENT.post(f"{url}/v1/chat", **request)
    assert response.status_code == 200
    text = path.read_text(encoding="utf-8")
    assert lint_file(path) == [], "the lint finds what redaction left"
    return text


def _check(url: str, planted: Fake, request: Request) -> None:
    with TemporaryDirectory() as folder:
        text = record(url, request, Path(folder))
    assert leaked(planted, text) == [], f"{planted.kind} {planted.value!r} leaked from {request}"


@EXAMPLES
@given(
    planted=st.one_of(vendor_fakes, password_fakes),
    name=credential_names,
    place=st.sampled_from(NAMED_PLACES),
    template=st.sampled_from([t for t in NAMED_PROSE if "set {name} to" not in t]),
)
def test_a_value_under_a_credential_name_never_reaches_disk(
    echo: str, planted: Fake, name: str, place: str, template: str
) -> None:
    _check(echo, planted, named_place(place, name, planted.value, template))


@EXAMPLES
@given(
    planted=st.one_of(vendor_fakes, pii_fakes),
    place=st.sampled_from(BARE_PLACES),
    template=st.sampled_from(PROSE),
)
def test_vendor_keys_and_personal_data_never_reach_disk_without_a_name(
    echo: str, planted: Fake, place: str, template: str
) -> None:
    _check(echo, planted, bare_place(place, planted.value, template))


@EXAMPLES
@given(planted=vendor_fakes, name=credential_names)
def test_a_vendor_key_after_a_name_without_separator_never_reaches_disk(echo: str, planted: Fake, name: str) -> None:
    # "set DB_PASSWORD to <key>": no "=" or ":" ties the name to the value; the key's shape is enough.
    _check(echo, planted, planted_in_response(reply=f"set {name} to {planted.value} in the settings page"))


#: The spellings issue 32 found leaking: each must be gone from the cassette.
ISSUE_EXAMPLES: dict[str, Callable[[str], Request]] = {
    "newPassword": lambda v: {"json": {"user": {"newPassword": v}}},
    "DB_PASSWORD": lambda v: {"json": {"messages": [{"role": "user", "content": f"DB_PASSWORD={v}"}]}},
    "STS SessionToken": lambda v: planted_in_response(
        reply=f"<Credentials><SessionToken>{v}</SessionToken></Credentials>"
    ),
    "session cookie outside Cookie": lambda v: {"headers": {"X-Forwarded-Session": v}},
    "session cookie in a reply": lambda v: planted_in_response(reply=f"Set-Cookie: sessionid={v}; Path=/; HttpOnly"),
}


@pytest.mark.parametrize("case", sorted(ISSUE_EXAMPLES))
def test_the_spellings_issue_32_found_are_redacted(echo: str, tmp_path: Path, case: str) -> None:
    secret = "Zx9kQ2mP7vR4tL8wN3"
    text = record(echo, ISSUE_EXAMPLES[case](secret), tmp_path)
    assert secret not in text


@pytest.mark.parametrize(
    "value", ["4111.1111.1111.1111", "+14155550132", "020 7946 0958", "+44 20 7946 0958", "DE89 3704 0044 0532 0130 00"]
)
def test_the_personal_data_issue_32_found_is_redacted(echo: str, tmp_path: Path, value: str) -> None:
    text = record(echo, {"json": {"messages": [{"role": "user", "content": f"Reach me: {value}."}]}}, tmp_path)
    assert value not in text


CREDENTIAL_NAMES_SAMPLE = (("password",), ("db", "password"), ("new", "password"), ("session", "token"), ("api", "key"))
PLUGIN_TEST = """
    import json
    import os

    import httpx
    import pytest

    @pytest.mark.cassette
    def test_send_every_case():
        with httpx.Client(timeout=10) as client:
            for request in json.loads(open(os.environ["CASES"], encoding="utf-8").read()):
                assert client.post(os.environ["ECHO_URL"] + "/v1/chat", **request).status_code == 200
"""


def test_the_pytest_plugin_records_none_of_a_generated_batch_and_replays_it(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, echo: str
) -> None:
    # Every vendor kind and personal-data kind, under a name in every style and in every place, through
    # the real plugin (the cassette marker, --record-mode once), then replayed offline (record mode none).
    planted: list[Fake] = []
    requests: list[Request] = []
    names = itertools.cycle(styled(words, style) for words, style in itertools.product(CREDENTIAL_NAMES_SAMPLE, STYLES))
    named_places = itertools.cycle(NAMED_PLACES)
    bare_places = itertools.cycle(BARE_PLACES)
    for seed, kind in enumerate(sorted(VENDOR_KINDS) + sorted(PII_KINDS) * 4):
        value = fake(kind, seed)
        planted.append(value)
        requests.append(bare_place(next(bare_places), value.value, PROSE[seed % len(PROSE)]))
        if kind in VENDOR_KINDS:
            requests.append(named_place(next(named_places), next(names), value.value, NAMED_PROSE[seed % 3]))
    for seed in range(24):
        secret, _ = password(random.Random(seed))
        planted.append(Fake("password", secret, secret))
        requests.append(named_place(next(named_places), next(names), secret, NAMED_PROSE[seed % 3]))
    cases = pytester.path / "cases.json"
    cases.write_text(json.dumps(requests), encoding="utf-8")
    monkeypatch.setenv("CASES", str(cases))
    monkeypatch.setenv("ECHO_URL", echo)
    pytester.makeini("[pytest]\nasyncio_default_fixture_loop_scope = function\n")
    pytester.makepyfile(test_batch=PLUGIN_TEST)
    pytester.runpytest_inprocess("-p", "no:cacheprovider", "--record-mode", "once").assert_outcomes(passed=1)
    path = pytester.path / "cassettes" / "test_batch" / "test_send_every_case.yaml"
    text = path.read_text(encoding="utf-8")
    assert len(requests) > 100 and text.count("- request:") == len(requests)
    assert [(p.kind, p.value) for p in planted if leaked(p, text)] == []
    assert lint_file(path) == []
    pytester.runpytest_inprocess("-p", "no:cacheprovider").assert_outcomes(passed=1)
