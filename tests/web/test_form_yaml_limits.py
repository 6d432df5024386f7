"""The case form's YAML box (and the agent's) is hostile input: deep nesting is a field error, never a 500.

PyYAML's pure-Python composer recursed three frames a level, so 900 levels typed
in the "other keys" box ended in a RecursionError and an HTTP 500. The box is now
read by ``jurybox.inputs.read_yaml`` (40 levels at most in a form) and the page
comes back with the form and the field's error.
"""

from __future__ import annotations

import re
from html import unescape
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from webkit import SUITE

from jurybox.store import import_suite_file, open_store
from jurybox.web import create_app

CSRF = re.compile(r'name="csrf" value="([^"]+)"')
EDIT = "/suites/property-agent/edit"


@pytest.fixture
def editor(tmp_path: Path) -> TestClient:
    url = f"sqlite:///{tmp_path / 'forms.db'}"
    with open_store(url) as store:
        import_suite_file(store, SUITE)
        token = store.users.add_user("ada", "admin")
    client = TestClient(create_app(url), raise_server_exceptions=False, follow_redirects=False)
    found = CSRF.search(client.get("/login").text)
    assert found is not None
    assert client.post("/login", data={"token": token, "next": "/runs", "csrf": found.group(1)}).status_code == 303
    return client


def _form(client: TestClient) -> dict[str, str]:
    """The new-case form as the browser posts it: its inputs and text areas with their values."""
    page = client.get(EDIT + "/case")
    assert page.status_code == 200, page.text
    form = {}
    for match in re.finditer(r"<input ([^>]*)>", page.text):
        attrs = dict(re.findall(r'(\w+)="([^"]*)"', match.group(1)))
        if "name" in attrs and (attrs.get("type") != "radio" or "checked" in match.group(1)):
            form[attrs["name"]] = unescape(attrs.get("value", ""))
    for match in re.finditer(r'<textarea [^>]*name="([^"]+)"[^>]*>(.*?)</textarea>', page.text, re.S):
        form[match.group(1)] = unescape(match.group(2))
    return form


def _field_errors(html: str, field: str) -> list[str]:
    return [unescape(m) for m in re.findall(rf'<p class="field-error" id="error-{field}"[^>]*>([^<]*)</p>', html)]


@pytest.mark.parametrize("depth", [900, 10_000])
@pytest.mark.parametrize("style", ["flow", "block"])
def test_deep_other_keys_are_a_field_error_not_a_500(editor: TestClient, depth: int, style: str) -> None:
    form = _form(editor)
    deep = "[" * depth + "]" * depth if style == "flow" else "\n  " + "- " * depth + "x"
    form.update({"name": "deep-other", "prompt": "hi", "criteria": "says hi", "other": f"metadata: {deep}"})
    done = editor.post(EDIT + "/case", data=form)
    assert done.status_code == 422, done.text[:300]
    errors = _field_errors(done.text, "other")
    assert errors, done.text[:500]
    assert "nested deeper than 40 levels" in errors[0] or "nesting depth" in errors[0]


def test_deep_tool_arguments_are_a_field_error_not_a_500(editor: TestClient) -> None:
    form = _form(editor)
    arguments = '{"a": ' * 900 + "1" + "}" * 900
    form.update({"name": "deep-tools", "prompt": "hi", "criteria": "says hi", "tools": f"search {arguments}"})
    done = editor.post(EDIT + "/case", data=form)
    assert done.status_code == 422, done.text[:300]
    errors = _field_errors(done.text, "tools")
    assert errors and "nested deeper than 40 levels" in errors[0]
