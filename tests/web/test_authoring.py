"""Writing cases in the browser: field errors in the loader's words, conflicts, history and revert, hostile posts.

Each test works on a store of its own holding the example suite (imported as
``jurybox store import`` does), an editor, a second editor, an admin and a viewer.
"""

from __future__ import annotations

import re
import signal
import socket
import subprocess
import sys
import time
from datetime import timedelta
from html import unescape
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml
from fastapi.testclient import TestClient
from webkit import SUITE

from jurybox.store import import_suite_file, open_store
from jurybox.suites import SuiteError, load_suite
from jurybox.web import create_app
from jurybox.web._case_form import PASS_MARK_RANGE, pass_mark

CSRF = re.compile(r'name="csrf" value="([^"]+)"')
SUITE_NAME = "property-agent"
EDIT = f"/suites/{SUITE_NAME}/edit"


@pytest.fixture
def stored(tmp_path: Path) -> tuple[str, dict[str, str]]:
    url = f"sqlite:///{tmp_path / 'authoring.db'}"
    with open_store(url) as store:
        import_suite_file(store, SUITE)
        tokens = {
            name: store.users.add_user(name, role)
            for name, role in (("pm.alice", "editor"), ("pm.bob", "editor"), ("ada", "admin"), ("vic", "viewer"))
        }
    return url, tokens


def _client(url: str, token: str | None = None) -> TestClient:
    client = TestClient(create_app(url), raise_server_exceptions=False, follow_redirects=False)
    if token is not None:
        page = client.get("/login")
        found = CSRF.search(page.text)
        assert found is not None
        done = client.post("/login", data={"token": token, "next": "/runs", "csrf": found.group(1)})
        assert done.status_code == 303
    return client


def _form(client: TestClient | httpx.Client, case: str | None = None) -> dict[str, str]:
    """Every field of the case form as the browser would post it (the page's own values)."""
    page = client.get(EDIT + "/case", params={"name": case} if case else None)
    assert page.status_code == 200, page.text
    text = page.text
    form: dict[str, str] = {}
    for match in re.finditer(r"<input ([^>]*)>", text):
        attrs = dict(re.findall(r'(\w+)="([^"]*)"', match.group(1)))
        if "name" not in attrs or (attrs.get("type") == "radio" and "checked" not in match.group(1)):
            continue
        form[attrs["name"]] = unescape(attrs.get("value", ""))
    for match in re.finditer(r'<textarea [^>]*name="([^"]+)"[^>]*>(.*?)</textarea>', text, re.S):
        form[match.group(1)] = unescape(match.group(2))
    for match in re.finditer(r'<select [^>]*name="([^"]+)"[^>]*>(.*?)</select>', text, re.S):
        chosen = re.search(r'<option value="([^"]*)" selected>', match.group(2))
        form[match.group(1)] = unescape(chosen.group(1)) if chosen else ""
    return form


def _field_errors(html: str, field: str) -> list[str]:
    """The error messages printed inside the form field ``field``."""
    return [unescape(m) for m in re.findall(rf'<p class="field-error" id="error-{field}"[^>]*>([^<]*)</p>', html)]


def _cli_problems(tmp_path: Path, case: dict[str, Any]) -> list[str]:
    """What ``jurybox run`` says about ``case`` in the example suite, field by field."""
    suite = yaml.safe_load(SUITE.read_text(encoding="utf-8"))
    suite["cases"].append(case)
    file = tmp_path / "cli-suite.yaml"
    file.write_text(yaml.safe_dump(suite, sort_keys=False), encoding="utf-8")
    with pytest.raises(SuiteError) as raised:
        load_suite(file, check_agent=False, base_dir=SUITE.parent)
    return [f"{p.field}: {p.message}" for p in raised.value.problems]


def _edits(url: str) -> tuple[int, int]:
    with open_store(url) as store:
        cases = store.authoring.case_versions(SUITE_NAME, include_retired=True)
        edits = sum(len(store.authoring.case_history(SUITE_NAME, c.name)) for c in cases)
        return edits, len(store.users.audit_entries(limit=1000))


def test_a_mistake_is_shown_next_to_its_field_in_the_clis_words(
    stored: tuple[str, dict[str, str]], tmp_path: Path
) -> None:
    url, tokens = stored
    with _client(url, tokens["pm.alice"]) as client:
        form = _form(client)
        form.update(
            name="pm-weekend", shape="rounds", r0_prompt="What are my listings?", r0_threshold="150",
            r1_criteria="Names the first listing", r1_tools="get_bookings", other="judgs:\n  - contains: Beach\n",
        )  # fmt: skip
        refused = client.post(EDIT + "/case", data=form)
        assert refused.status_code == 422, refused.text
        round_case = {
            "name": "pm-weekend",
            "rounds": [
                {"prompt": "What are my listings?", "threshold": 150},
                {"prompt": "", "criteria": "Names the first listing", "expect_tools": ["get_bookings"]},
            ],
        }
        # The unknown key is reported alone by the CLI too once the rounds are right; compare field by field.
        cli = _cli_problems(tmp_path, round_case)
        index = len(yaml.safe_load(SUITE.read_text())["cases"])
        threshold_words = next(p for p in cli if p.startswith(f"cases[{index}].rounds[0].threshold"))
        prompt_words = next(p for p in cli if p.startswith(f"cases[{index}].rounds[1].prompt"))
        # The pass mark speaks the user's units (80, 80% or 0.8), where the CLI says the range of the number.
        assert "less than or equal to 1" in threshold_words
        assert _field_errors(refused.text, "r0_threshold") == [PASS_MARK_RANGE]
        assert _field_errors(refused.text, "r1_prompt") == [prompt_words.split(": ", 1)[1]]
        other = _field_errors(refused.text, "other")
        assert other and other[0].startswith("unknown key 'judgs' (did you mean 'judges'?)")
        # What was typed is shown again, so nothing is lost while fixing it.
        assert "Names the first listing" in refused.text
        assert _edits(url)[0] == _edits(url)[0] and "pm-weekend" not in client.get(EDIT).text

        form.update(
            r0_threshold="0.8", r1_prompt="And the first one's bookings?", other="judges:\n  - contains: Beach\n"
        )
        saved = client.post(EDIT + "/case", data=form)
        assert saved.status_code == 303, _field_errors(saved.text, "case") or saved.text
        listing = client.get("/api" + EDIT).json()
        case = next(c for c in listing["cases"] if c["name"] == "pm-weekend")
        assert case["current"] and case["rounds"] == 2
    with open_store(url) as store:
        version = store.authoring.current_version(SUITE_NAME, "pm-weekend")
        assert version is not None
        # Saved as the runner records it, so a run of the stored suite records this very version.
        assert version.definition["rounds"][1] == {
            "prompt": "And the first one's bookings?",
            "criteria": "Names the first listing",
            "expect_tools": {"calls": ["get_bookings"]},
        }
        assert version.definition["judges"] == [{"contains": "Beach"}]
        assert store.users.audit_entries(limit=1)[0].action == "case.create"


def test_an_edit_keeps_what_the_form_does_not_show_and_round_trips(stored: tuple[str, dict[str, str]]) -> None:
    url, tokens = stored
    with open_store(url) as store:
        before = store.authoring.current_version(SUITE_NAME, "beach-house-june-revenue")
    assert before is not None
    with _client(url, tokens["pm.alice"]) as client:
        form = _form(client, "beach-house-june-revenue")
        assert form["tools"].startswith("get_revenue {") and form["tools_mode"] == "strict"
        unchanged = client.post(EDIT + "/case", params={"name": "beach-house-june-revenue"}, data=form)
        assert unchanged.status_code == 303
        with open_store(url) as store:
            again = store.authoring.current_version(SUITE_NAME, "beach-house-june-revenue")
        assert again is not None and again.id == before.id  # the same content is the same version
        form["description"] = "Revenue for June, checked against the tool's figure."
        edited = client.post(EDIT + "/case", params={"name": "beach-house-june-revenue"}, data=form)
        assert edited.status_code == 303
    with open_store(url) as store:
        after = store.authoring.current_version(SUITE_NAME, "beach-house-june-revenue")
    assert after is not None and after.id != before.id
    assert {**before.definition, "description": form["description"]} == dict(after.definition)


def test_a_second_writer_sees_the_difference_and_nothing_is_overwritten(stored: tuple[str, dict[str, str]]) -> None:
    url, tokens = stored
    with _client(url, tokens["pm.alice"]) as alice, _client(url, tokens["pm.bob"]) as bob:
        alices = _form(alice, "counts-listings")
        bobs = _form(bob, "counts-listings")
        alices["description"] = "Alice's description"
        assert alice.post(EDIT + "/case", params={"name": "counts-listings"}, data=alices).status_code == 303
        edits_before = _edits(url)
        bobs["description"] = "Bob's <b>description</b>"
        refused = bob.post(EDIT + "/case", params={"name": "counts-listings"}, data=bobs)
        assert refused.status_code == 409
        assert _edits(url) == edits_before
        diff = re.search(r'<pre class="diff">(.*?)</pre>', refused.text, re.S)
        assert diff is not None
        assert '<span class="d-remove">-description: Alice&#39;s description</span>' in diff.group(1)
        assert "+description: Bob&#39;s &lt;b&gt;description&lt;/b&gt;" in diff.group(1)
        with open_store(url) as store:
            now = store.authoring.current_version(SUITE_NAME, "counts-listings")
        assert now is not None and now.definition["description"] == "Alice's description"
        # Bob read the difference: saving again (from what is there now) replaces it, knowingly.
        assert f'name="base_version" value="{now.id}"' in refused.text
        bobs["base_version"] = str(now.id)
        assert bob.post(EDIT + "/case", params={"name": "counts-listings"}, data=bobs).status_code == 303


def test_history_shows_who_when_and_what_and_revert_goes_back(stored: tuple[str, dict[str, str]]) -> None:
    url, tokens = stored
    with _client(url, tokens["pm.alice"]) as client:
        form = _form(client, "counts-listings")
        form["prompt"] = "How many listings do I have right now?"
        assert client.post(EDIT + "/case", params={"name": "counts-listings"}, data=form).status_code == 303
        history = client.get("/api" + EDIT + "/history", params={"name": "counts-listings"}).json()
        assert [e["action"] for e in history["edits"]] == ["edit", "import"]
        newest = history["edits"][0]
        assert newest["author"] == "pm.alice" and newest["at"] and newest["current"]
        changed = {(line["kind"], line["text"]) for line in newest["diff"]}
        assert ("add", "+prompt: How many listings do I have right now?") in changed
        assert ("remove", "-prompt: How many listings do I have?") in changed
        first = history["edits"][1]["version"]
        page = client.get(EDIT + "/history", params={"name": "counts-listings"})
        csrf = CSRF.search(page.text)
        assert csrf is not None and "go back to this version" in page.text
        data = {"csrf": csrf.group(1), "case": "counts-listings", "version": str(first)}
        stale = client.post(EDIT + "/revert", data={**data, "base_version": str(first)})
        assert stale.status_code == 409
        done = client.post(EDIT + "/revert", data={**data, "base_version": str(history["current_version"])})
        assert done.status_code == 303
        after = client.get("/api" + EDIT + "/history", params={"name": "counts-listings"}).json()
        assert after["edits"][0]["action"] == "revert" and after["current_version"] == first
        assert client.get("/api/audit").json()["entries"][0]["action"] == "case.revert"


def test_duplicate_and_retire(stored: tuple[str, dict[str, str]]) -> None:
    url, tokens = stored
    with _client(url, tokens["pm.alice"]) as client:
        page = client.get(EDIT)
        csrf = CSRF.search(page.text)
        assert csrf is not None
        token = csrf.group(1)
        copied = client.post(EDIT + "/duplicate", data={"csrf": token, "case": "counts-listings", "new_name": "n2"})
        assert copied.status_code == 303
        taken = client.post(EDIT + "/duplicate", data={"csrf": token, "case": "counts-listings", "new_name": "n2"})
        assert taken.status_code == 409
        cases = {c["name"]: c for c in client.get("/api" + EDIT).json()["cases"]}
        version = cases["n2"]["version"]
        retired = client.post(EDIT + "/retire", data={"csrf": token, "case": "n2", "base_version": str(version)})
        assert retired.status_code == 303
        cases = {c["name"]: c for c in client.get("/api" + EDIT).json()["cases"]}
        assert not cases["n2"]["current"] and cases["counts-listings"]["current"]
        actions = [e["action"] for e in client.get("/api/audit").json()["entries"][:2]]
        assert actions == ["case.retire", "case.duplicate"]
    with open_store(url) as store:
        names = [c["name"] for c in store.suites.export(SUITE_NAME)["cases"]]
    assert "n2" not in names and "counts-listings" in names


def test_hostile_posts_to_every_write_are_refused_and_write_nothing(stored: tuple[str, dict[str, str]]) -> None:
    url, tokens = stored
    with _client(url, tokens["pm.alice"]) as alice:
        good_case = _form(alice, "counts-listings")
        session = alice.cookies.get("jurybox_session") or ""
    csrf = good_case["csrf"]
    with open_store(url) as store:
        viewer = store.users.log_in(tokens["vic"])
        expired = store.users.log_in(tokens["pm.alice"], lifetime=timedelta(seconds=-1))
        version = store.authoring.current_version(SUITE_NAME, "counts-listings")
    assert viewer is not None and expired is not None and version is not None
    good_case["description"] = "changed"
    endpoints = {
        "save": (EDIT + "/case?name=counts-listings", good_case),
        "new": (EDIT + "/case", {**good_case, "name": "brand-new", "base_version": ""}),
        "duplicate": (EDIT + "/duplicate", {"csrf": csrf, "case": "counts-listings", "new_name": "copy"}),
        "retire": (EDIT + "/retire", {"csrf": csrf, "case": "counts-listings", "base_version": str(version.id)}),
        "revert": (
            EDIT + "/revert",
            {"csrf": csrf, "case": "counts-listings", "version": str(version.id), "base_version": str(version.id)},
        ),
    }
    mine = {"jurybox_session": session}
    statuses: dict[str, int] = {}
    before = _edits(url)
    with _client(url) as client:
        for endpoint, (target, good) in endpoints.items():
            attempts: list[tuple[str, dict[str, str], dict[str, str]]] = [
                ("no session", {}, good),
                ("expired session", {"jurybox_session": expired[0]}, good),
                ("forged session", {"jurybox_session": "x" * 43}, good),
                ("viewer", {"jurybox_session": viewer[0]}, {**good, "csrf": viewer[1].csrf_token}),
                ("missing csrf", mine, {k: v for k, v in good.items() if k != "csrf"}),
                ("another login's csrf", mine, {**good, "csrf": viewer[1].csrf_token}),
                ("unknown field", mine, {**good, "role": "admin"}),
                ("body too large", mine, {**good, "case": "n" * 70_000}),
                ("version not a number", mine, {**good, "base_version": "1 or 1=1", "version": "-1"}),
                ("name too long", mine, {**good, "case": "c" * 600, "new_name": "d" * 600, "name": "e" * 600}),
                ("no such suite", mine, good),
            ]
            for label, cookies, form in attempts:
                client.cookies.clear()
                for cookie, value in cookies.items():
                    client.cookies.set(cookie, value)
                path = target.replace(SUITE_NAME, "no-such-suite") if label == "no such suite" else target
                response = client.post(path, data=form)
                statuses[f"{endpoint}: {label}"] = response.status_code
                assert "Traceback" not in response.text
            client.cookies.clear()
            client.cookies.set("jurybox_session", session)
            raw = client.post(
                target, content=b"csrf=\xff\xfe", headers={"content-type": "application/x-www-form-urlencoded"}
            )
            statuses[f"{endpoint}: invalid utf-8"] = raw.status_code
            statuses[f"{endpoint}: json body"] = client.post(target, json=good).status_code
        # Field values the loader refuses, and what only an admin may write, on the case form.
        for label, change in (
            ("threshold as text", {"threshold": "high"}),
            ("huge follow-ups", {"max_follow_ups": "9" * 40}),
            ("tools not JSON", {"tools": "get_listings {not json"}),
            ("other keys not YAML", {"other": "a: [b"}),
            ("other keys an alias bomb", {"other": "a: &a [x, x]\nb: &b [*a, *a]\nc: &c [*b, *b]\n" + _bomb()}),
            ("a python judge by an editor", {"other": "judges:\n  - python: {ref: 'os:getcwd'}\n"}),
            ("a command judge by an editor", {"other": "judges:\n  - command: {cmd: 'touch /tmp/x'}\n"}),
            ("a judge model by an editor", {"other": "judges:\n  - correctness: {model: 'openai:gpt-4o'}\n"}),
            ("sql by an editor", {"other": "sql_checks:\n  - query: select 1\n"}),
            ("a rename", {"name": "renamed"}),
            ("revival not yes or no", {"revive": "maybe"}),
        ):
            response = client.post(EDIT + "/case", params={"name": "counts-listings"}, data={**good_case, **change})
            statuses[f"form: {label}"] = response.status_code
    assert all(code in (400, 401, 403, 404, 409, 413, 422) for code in statuses.values()), statuses
    assert statuses["save: no session"] == 401 and statuses["retire: viewer"] == 403
    assert statuses["revert: missing csrf"] == 403 and statuses["duplicate: body too large"] == 413
    assert statuses["form: a python judge by an editor"] == 422 and statuses["form: threshold as text"] == 422
    assert _edits(url) == before


def test_an_admin_may_add_a_sql_check_and_an_editor_may_keep_it(stored: tuple[str, dict[str, str]]) -> None:
    url, tokens = stored
    with _client(url, tokens["ada"]) as admin:
        form = _form(admin, "counts-listings")
        form["other"] = "sql_checks:\n  - query: select count(*) from listings\n    expect: {min: 1}\n"
        # The stored suite kept its file's `database:`, so the check needs no database of its own.
        done = admin.post(EDIT + "/case", params={"name": "counts-listings"}, data=form)
        assert done.status_code == 303, _field_errors(done.text, "other")
    with _client(url, tokens["pm.alice"]) as editor:
        form = _form(editor, "counts-listings")
        assert "select count(*) from listings" in form["other"]
        form["description"] = "still checks the database"
        assert editor.post(EDIT + "/case", params={"name": "counts-listings"}, data=form).status_code == 303


def test_store_text_is_escaped_on_the_editing_pages(stored: tuple[str, dict[str, str]]) -> None:
    url, tokens = stored
    payload = "<script>window.__xss=1</script>"
    with open_store(url) as store:
        store.authoring.save_case(
            SUITE_NAME, payload, {"name": payload, "prompt": payload, "description": payload},
            author=payload, base_version=None, action="create",
        )  # fmt: skip
    with _client(url, tokens["pm.alice"]) as client:
        for page in (
            client.get(EDIT),
            client.get(EDIT + "/case", params={"name": payload}),
            client.get(EDIT + "/history", params={"name": payload}),
        ):
            assert page.status_code == 200
            assert payload not in page.text and "&lt;script&gt;window.__xss=1&lt;/script&gt;" in page.text


def _bomb() -> str:
    """YAML aliases that expand to billions of values from a few hundred bytes."""
    lines = [f"l{i}: &l{i} [{', '.join([f'*l{i - 1}'] * 9)}]" for i in range(1, 12)]
    return "l0: &l0 [x]\n" + "\n".join(lines) + "\n"


def test_rounds_past_the_forms_last_are_kept(stored: tuple[str, dict[str, str]]) -> None:
    url, tokens = stored
    rounds = [{"prompt": f"question {n}", "criteria": f"answers {n}"} for n in range(1, 8)]
    with open_store(url) as store:
        version = store.authoring.save_case(
            SUITE_NAME, "long-talk", {"name": "long-talk", "rounds": rounds}, author="ada", base_version=None
        )
    with _client(url, tokens["pm.alice"]) as client:
        form = _form(client, "long-talk")
        assert form["r4_prompt"] == "question 5" and "2 more round(s)" in client.get(EDIT + "/case?name=long-talk").text
        form["r0_prompt"] = "question one"
        assert client.post(EDIT + "/case", params={"name": "long-talk"}, data=form).status_code == 303
    with open_store(url) as store:
        saved = store.authoring.current_version(SUITE_NAME, "long-talk")
    assert saved is not None and saved.id != version
    assert [r["prompt"] for r in saved.definition["rounds"]] == [
        "question one",
        *(f"question {n}" for n in range(2, 8)),
    ]


def test_a_saved_case_survives_a_kill_9_of_the_server(stored: tuple[str, dict[str, str]]) -> None:
    url, tokens = stored
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = subprocess.Popen(
        [sys.executable, "-m", "jurybox", "serve", "--store", url, "--port", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        base = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 30
        while True:
            try:
                if httpx.get(base + "/api/health", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            assert time.monotonic() < deadline, "the dashboard did not start"
            time.sleep(0.1)
        with httpx.Client(base_url=base, follow_redirects=False, timeout=10) as client:
            found = CSRF.search(client.get("/login").text)
            assert found is not None
            assert client.post("/login", data={"token": tokens["pm.alice"], "csrf": found.group(1)}).status_code == 303
            form = _form(client, "counts-listings")
            form["description"] = "saved just before the crash"
            assert client.post(EDIT + "/case", params={"name": "counts-listings"}, data=form).status_code == 303
        server.send_signal(signal.SIGKILL)
        server.wait(10)
    finally:
        if server.poll() is None:
            server.kill()
            server.wait(10)
    with open_store(url) as store:
        saved = store.authoring.current_version(SUITE_NAME, "counts-listings")
        assert saved is not None and saved.definition["description"] == "saved just before the crash"
        assert store.users.audit_entries(limit=1)[0].action == "case.edit"


def test_only_an_admin_changes_the_agent_and_it_is_checked_by_building_it(
    stored: tuple[str, dict[str, str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    url, tokens = stored
    monkeypatch.chdir(SUITE.parents[2])  # the repository: the example agent's module resolves from here
    new_agent = "python: examples.property_agent.agent:make_agent\noptions: {offline: true}\n"
    with _client(url, tokens["pm.alice"]) as editor:
        page = editor.get(EDIT)
        assert 'name="agent"' not in page.text and "examples.property_agent.agent:make_agent" in page.text
        csrf = CSRF.search(page.text)
        assert csrf is not None
        assert editor.post(EDIT + "/agent", data={"csrf": csrf.group(1), "agent": new_agent}).status_code == 403
    with _client(url, tokens["ada"]) as admin:
        page = admin.get(EDIT)
        assert 'name="agent"' in page.text
        csrf = CSRF.search(page.text)
        assert csrf is not None
        token = csrf.group(1)
        assert admin.post(EDIT + "/agent", data={"agent": new_agent}).status_code == 403
        for bad, words in (
            ("python: [unclosed", "agent: line 1: not valid YAML"),
            ("- a list", "agent: the agent is a YAML mapping"),
            ("python: no_such_module_for_jurybox:respond", "agent.python: "),
        ):
            refused = admin.post(EDIT + "/agent", data={"csrf": token, "agent": bad})
            assert refused.status_code == 422, bad
            errors = _field_errors(refused.text, "agent")
            assert errors and errors[0].startswith(words), (bad, errors)
            assert bad.split(":")[0] in refused.text  # what was typed is shown again
        with open_store(url) as store:
            assert store.suites.export(SUITE_NAME)["agent"]["python"] == "examples.property_agent.agent:make_agent"
            assert "options" in store.suites.export(SUITE_NAME)["agent"]
        done = admin.post(EDIT + "/agent", data={"csrf": token, "agent": new_agent})
        assert done.status_code == 303
        entry = admin.get("/api/audit").json()["entries"][0]
        assert entry["action"] == "suite.agent" and entry["actor"] == "ada"
    with open_store(url) as store:
        assert store.suites.export(SUITE_NAME)["agent"] == {
            "python": "examples.property_agent.agent:make_agent",
            "options": {"offline": True},
        }


def test_a_pass_mark_is_read_in_the_users_units() -> None:
    assert pass_mark("0.8") == pass_mark("80") == pass_mark("80%") == pass_mark(" 80 % ".replace(" ", "")) == 0.8
    assert pass_mark("1") == 1.0 and pass_mark("0") == 0.0 and pass_mark("100") == 1.0
    assert pass_mark("150") == 150.0 and pass_mark("-3") == -3.0  # out of range: the loader says so, in PASS_MARK_RANGE
    assert pass_mark("abc") == "abc" and pass_mark("") is None
