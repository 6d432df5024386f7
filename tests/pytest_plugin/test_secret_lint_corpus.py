"""``jurybox lint-cassettes`` finds every generated secret in a hand-written cassette, however it is folded.

Each example writes one cassette holding one planted value (a vendor key, a
password under a credential name in any spelling, or personal data) in one place
(request or response header, query, JSON body at depth, form body, reply text, a
server-sent-event stream, a gzip ``!!binary`` body, pydantic-ai's ``parsed_body``,
JSON inside a string, a YAML comment), written by vcrpy's serializer or by
PyYAML folding lines at 20 to 100 columns: a JSON password lands on another line
than its key, a PEM header is split. The lint must report it; the same cassette
with the value replaced by ``<REDACTED>`` must lint clean.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from tempfile import TemporaryDirectory
from typing import Any
from urllib.parse import urlencode

import yaml
from hypothesis import given, settings
from hypothesis import strategies as st
from secret_corpus import NAMED_PROSE, PROSE, Fake, credential_names, password_fakes, pii_fakes, vendor_fakes
from vcr.serializers import yamlserializer

from jurybox.pytest_plugin._lint import lint_file

EXAMPLES = settings(max_examples=300, derandomize=True, deadline=None)

PLACES = (
    "request-header", "response-header", "query", "json-deep", "form", "reply", "sse", "gzip-binary",
    "parsed-body", "json-in-string", "comment",
)  # fmt: skip


def _reply(content: str) -> str:
    return json.dumps({"choices": [{"message": {"role": "assistant", "content": content}}]})


def cassette(place: str, name: str, value: str, prose: str) -> tuple[dict[str, Any], str]:
    """A one-interaction vcrpy cassette with ``value`` planted in ``place``, and a comment line for the file."""
    request: dict[str, Any] = {
        "body": json.dumps({"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "hi"}]}),
        "headers": {"content-type": ["application/json"]},
        "method": "POST",
        "uri": "https://api.example.com/v1/chat/completions",
    }
    response: dict[str, Any] = {
        "body": {"string": _reply("hello")},
        "headers": {"content-type": ["application/json"]},
        "status": {"code": 200, "message": "OK"},
    }
    comment = ""
    if place == "request-header":
        request["headers"][name] = [value]
    elif place == "response-header":
        response["headers"][name] = [value]
    elif place == "query":
        request["uri"] += "?" + urlencode({"page": "2", name: value})
    elif place == "json-deep":
        request["body"] = json.dumps({"config": {"auth": [{"region": "eu", name: value}]}, "note": "a" * 90})
    elif place == "form":
        request["body"] = urlencode({"user": "alice", name: value})
    elif place == "reply":
        response["body"]["string"] = _reply(prose)
    elif place == "sse":
        events = [{"choices": [{"delta": {"content": part}}]} for part in ("Sure, ", prose, " done.")]
        response["body"]["string"] = "".join(f"data: {json.dumps(event)}\n\n" for event in events) + "data: [DONE]\n\n"
    elif place == "gzip-binary":
        response["body"]["string"] = gzip.compress(_reply(prose).encode())
    elif place == "parsed-body":
        request["parsed_body"] = {"config": {"auth": {name: value}}}
        del request["body"]
    elif place == "json-in-string":
        arguments = json.dumps({"target": "db", name: value})
        response["body"]["string"] = json.dumps({"tool_calls": [{"function": {"name": "f", "arguments": arguments}}]})
    else:
        comment = "# " + prose.replace("\n", " ") + "\n"
    return {"interactions": [{"request": request, "response": response}], "version": 1}, comment


def write(path: Path, data: dict[str, Any], comment: str, width: int | None) -> None:
    if width is None:
        text = yamlserializer.serialize(data)
    else:
        text = yaml.dump(data, Dumper=getattr(yaml, "CSafeDumper", yaml.SafeDumper), width=width)
    path.write_text(comment + text, encoding="utf-8")


def _lint(place: str, name: str, value: str, prose: str, width: int | None) -> list[Any]:
    with TemporaryDirectory() as folder:
        path = Path(folder) / "c.yaml"
        data, comment = cassette(place, name, value, prose)
        write(path, data, comment, width)
        return lint_file(path)


def check(planted: Fake, name: str, place: str, template: str, width: int | None) -> None:
    prose = template.format(name=name, value=planted.value)
    assert _lint(place, name, planted.value, prose, width), f"{planted.kind} {planted.value!r} missed in {place}"
    clean = template.format(name=name, value="<REDACTED>")
    assert _lint(place, name, "<REDACTED>", clean, width) == []


widths = st.one_of(st.none(), st.integers(min_value=20, max_value=100))


@EXAMPLES
@given(
    planted=st.one_of(vendor_fakes, password_fakes),
    name=credential_names,
    place=st.sampled_from(PLACES),
    template=st.sampled_from([t for t in NAMED_PROSE if "set {name} to" not in t]),
    width=widths,
)
def test_lint_finds_a_value_under_a_credential_name(
    planted: Fake, name: str, place: str, template: str, width: int | None
) -> None:
    check(planted, name, place, template, width)


@EXAMPLES
@given(
    planted=st.one_of(vendor_fakes, pii_fakes),
    place=st.sampled_from(PLACES),
    template=st.sampled_from(PROSE),
    width=widths,
)
def test_lint_finds_vendor_keys_and_personal_data_anywhere(
    planted: Fake, place: str, template: str, width: int | None
) -> None:
    # The value under a name that says nothing ("note"): found by its shape alone.
    check(planted, "note", place, template, width)


FOLDED = """\
interactions:
- request:
    body: '{"model": "m", "user": {"name": "alice",
      "password":
      "hunter2-folded"}}'
    headers: {}
    method: POST
    uri: https://api.example.com/v1
  response:
    body:
      string: "Here is the key -----BEGIN RSA
        PRIVATE KEY-----\\nMIIEowIBAAKCAQEAx\\n-----END RSA PRIVATE KEY-----"
    headers: {}
    status: {code: 200, message: OK}
version: 1
"""


def test_folding_cannot_split_a_secret_from_its_name(tmp_path: Path) -> None:
    # The two cases issue 32 found: a JSON password on another line than its key, a PEM header split.
    path = tmp_path / "folded.yaml"
    path.write_text(FOLDED, encoding="utf-8")
    found = {(finding.line, finding.pattern) for finding in lint_file(path)}
    assert found == {(3, "named-secret"), (11, "private-key")}


def test_a_body_nested_past_the_stack_is_still_read(tmp_path: Path) -> None:
    # JSON nested 900 and 5,000 deep inside one YAML string: read as text, no RecursionError.
    for depth in (900, 5000):
        body = '{"a":' * depth + '{"password": "hunter2-deep"}' + "}" * depth
        data, _ = cassette("json-deep", "note", "x", "")
        data["interactions"][0]["request"]["body"] = body
        path = tmp_path / f"deep{depth}.yaml"
        write(path, data, "", None)
        assert [finding.pattern for finding in lint_file(path)] == ["named-secret"]
