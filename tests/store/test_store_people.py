"""Users and logins, human reviews and the labelled set they export, case authoring with history and conflicts.

Every test runs on SQLite and PostgreSQL (the ``store`` fixture).
"""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path

import pytest
from store_testkit import make_record

from jurybox.calibrate import load_labelled_set
from jurybox.store import EditConflictError, Store, StoreError, export_suite_file, import_suite_file

# -- users, logins, audit ----------------------------------------------------------------------------


def test_a_token_logs_in_and_only_its_hash_is_stored(store: Store) -> None:
    token = store.users.add_user("pm.alice", "editor")
    with store.engine.connect() as connection:
        stored = connection.exec_driver_sql("SELECT token_hash FROM users").scalar_one()
    assert token not in stored and len(stored) == 64
    assert store.users.log_in("not-the-token") is None
    logged = store.users.log_in(token)
    assert logged is not None
    session_id, login = logged
    assert login.user.name == "pm.alice" and login.user.may("editor") and not login.user.may("admin")
    again = store.users.login(session_id)
    assert again is not None and again.csrf_token == login.csrf_token
    store.users.log_out(session_id)
    assert store.users.login(session_id) is None


def test_sessions_expire_and_disabling_a_user_ends_them(store: Store) -> None:
    token = store.users.add_user("bob", "viewer")
    expired = store.users.log_in(token, lifetime=timedelta(seconds=-1))
    assert expired is not None and store.users.login(expired[0]) is None
    live = store.users.log_in(token)
    assert live is not None and store.users.login(live[0]) is not None
    store.users.disable_user("bob", actor="admin")
    assert store.users.login(live[0]) is None and store.users.log_in(token) is None
    assert store.users.user_count() == 0


def test_user_names_and_roles_are_checked_and_names_are_unique(store: Store) -> None:
    with pytest.raises(ValueError, match="user name"):
        store.users.add_user("<script>")
    with pytest.raises(ValueError, match="role must be one of viewer, editor, admin"):
        store.users.add_user("carol", "root")  # type: ignore[arg-type]
    store.users.add_user("carol")
    with pytest.raises(StoreError, match="already a user named 'carol'"):
        store.users.add_user("carol")


def test_writes_are_in_the_audit_log_newest_first(store: Store) -> None:
    store.users.add_user("dana", "admin")
    store.users.audit("dana", "case.save", "weather/paris", {"version": 3})
    entries = store.users.audit_entries()
    assert [(e.actor, e.action, e.target) for e in entries] == [
        ("dana", "case.save", "weather/paris"),
        ("jurybox web add-user", "user.add", "dana"),
    ]
    assert entries[0].detail == {"version": 3}
    assert [e.action for e in store.users.audit_entries(before=entries[0].id)] == ["user.add"]


# -- reviews -----------------------------------------------------------------------------------------


def _run_with_judgments(store: Store) -> str:
    run_id = store.runs.begin("suite", cases={"good": {}, "bad": {}})
    store.results.record(run_id, make_record("good"))
    store.results.record(run_id, make_record("bad", llm=False))
    store.finish_run(run_id)
    return run_id


def _llm_path(store: Store, run_id: str, case: str) -> str:
    queue = store.reviews.review_queue(run_id=run_id, tiers=["llm_judge"], limit=100)
    return next(item.path for item in queue if item.case == case)


def test_the_queue_puts_failures_first_and_drops_what_was_reviewed(store: Store) -> None:
    run_id = _run_with_judgments(store)
    queue = store.reviews.review_queue(run_id=run_id, limit=100)
    statuses = [item.status for item in queue]
    assert statuses[0] == "fail" and statuses == sorted(statuses, key=lambda s: s != "fail")
    assert all(item.path for item in queue)  # judges' own verdicts, not the case's cascade root
    first = queue[0]
    store.reviews.add_review(run_id, first.case, first.path, reviewer="alice", agree=False, label="pass", note="fine")
    after = store.reviews.review_queue(run_id=run_id, limit=100)
    assert (first.case, first.path) not in {(item.case, item.path) for item in after}
    assert len(after) == len(queue) - 1


def test_a_sample_of_passes_is_the_same_for_the_same_seed(store: Store) -> None:
    run_id = _run_with_judgments(store)
    one = store.reviews.review_queue(run_id=run_id, order="sample", limit=2, seed=7)
    two = store.reviews.review_queue(run_id=run_id, order="sample", limit=2, seed=7)
    assert [i.path for i in one] == [i.path for i in two] and all(i.status == "pass" for i in one)


def test_reviews_export_a_labelled_set_that_calibrate_loads(store: Store, tmp_path: Path) -> None:
    run_id = _run_with_judgments(store)
    path = _llm_path(store, run_id, "good")
    identity = {"key": "k-correctness", "name": "correctness", "model": "openai:m", "template": "abc123"}
    for reviewer, label in (("alice", "fail"), ("bob", "pass")):
        store.reviews.add_review(
            run_id, "good", path, reviewer=reviewer, agree=label == "pass", label=label,
            judge_key="k-correctness", judge_identity=identity,
        )  # fmt: skip
    rows = list(store.reviews.labelled_rows(judge_key="k-correctness"))
    assert len(rows) == 1
    row = rows[0]
    assert row["labels"] == {"alice": "fail", "bob": "pass"}
    assert row["input"] == "question for good" and row["output"] == "answer for good"
    assert row["metadata"]["judge_identity"] == identity and row["metadata"]["judge_status"] == "pass"
    labelled = tmp_path / "reviews.jsonl"
    labelled.write_text("".join(json.dumps(r) + "\n" for r in rows))
    loaded = load_labelled_set(labelled)
    assert len(loaded.rows) == 1 and loaded.kind == "binary" and loaded.raters == ("alice", "bob")


def test_a_review_needs_a_real_judgment_and_a_pass_or_fail_label(store: Store) -> None:
    run_id = _run_with_judgments(store)
    with pytest.raises(StoreError, match="no judgment 'llm_judge/nope' in case 'good'"):
        store.reviews.add_review(run_id, "good", "llm_judge/nope", reviewer="a", agree=True, label="pass")
    path = _llm_path(store, run_id, "good")
    with pytest.raises(ValueError, match="label must be pass or fail"):
        store.reviews.add_review(run_id, "good", path, reviewer="a", agree=True, label="maybe")
    with pytest.raises(ValueError, match="at most 10,000 characters"):
        store.reviews.add_review(run_id, "good", path, reviewer="a", agree=True, label="pass", note="x" * 10_001)
    hostile = "<script>alert(1)</script>\x00"
    review = store.reviews.add_review(run_id, "good", path, reviewer="a", agree=True, label="pass", note=hostile)
    stored = store.reviews.reviews(run_id=run_id)[0]
    assert stored.id == review and stored.note == "<script>alert(1)</script>\ufffd"  # kept as text, NUL replaced


# -- authoring ---------------------------------------------------------------------------------------


def _suite(store: Store) -> None:
    store.suites.save("weather", [("paris", {"name": "paris", "prompt": "Weather in Paris?"})])


def test_saves_make_versions_with_history_and_a_stale_save_is_refused(store: Store) -> None:
    _suite(store)
    first = store.authoring.current_version("weather", "paris")
    assert first is not None
    edited = {"name": "paris", "prompt": "Weather in Paris today?"}
    second = store.authoring.save_case("weather", "paris", edited, author="alice", base_version=first.id)
    with pytest.raises(EditConflictError, match="changed since you opened it") as conflict:
        store.authoring.save_case(
            "weather", "paris", {"name": "paris", "prompt": "x"}, author="bob", base_version=first.id
        )
    assert conflict.value.current is not None and conflict.value.current.definition == edited
    history = store.authoring.case_history("weather", "paris")
    assert [(h.action, h.author, h.version_id) for h in history] == [
        ("edit", "alice", second),
        ("import", "jurybox store import", first.id),
    ]
    reverted = store.authoring.revert_case("weather", "paris", first.id, author="alice", base_version=second)
    assert reverted == first.id  # the same definition is the same version
    assert store.suites.export("weather")["cases"] == [{"name": "paris", "prompt": "Weather in Paris?"}]


def test_create_duplicate_and_retire_keep_order_and_history(store: Store) -> None:
    _suite(store)
    rome = {"name": "rome", "prompt": "Weather in Rome?"}
    store.authoring.save_case("weather", "rome", rome, author="alice", base_version=None, action="create")
    with pytest.raises(EditConflictError):
        store.authoring.save_case("weather", "rome", rome, author="bob", base_version=None, action="create")
    store.authoring.duplicate_case("weather", "rome", "rome-2", author="bob")
    names = [v.name for v in store.authoring.case_versions("weather")]
    assert names == ["paris", "rome", "rome-2"]
    current = store.authoring.current_version("weather", "rome-2")
    assert current is not None and current.definition == {"name": "rome-2", "prompt": "Weather in Rome?"}
    store.authoring.retire_case(
        "weather", "rome", author="alice", base_version=store.authoring.current_version("weather", "rome").id
    )  # type: ignore[union-attr]
    assert [v.name for v in store.authoring.case_versions("weather")] == ["paris", "rome-2"]
    with_retired = store.authoring.case_versions("weather", include_retired=True)
    assert {v.name: v.current for v in with_retired} == {"paris": True, "rome": False, "rome-2": True}
    assert [h.action for h in store.authoring.case_history("weather", "rome")] == ["retire", "create"]


def test_an_exported_suite_imports_back_unchanged(store: Store, tmp_path: Path) -> None:
    source = tmp_path / "weather.yaml"
    source.write_text(
        "name: weather\nagent: {python: 'agents:respond'}\ncases:\n"
        "  - name: paris\n    prompt: Weather in Paris?\n    judges: [{contains: Paris}]\n"
        "  - name: rome\n    prompt: Weather in Rome?\n"
    )
    import_suite_file(store, source)
    exported = tmp_path / "exported.yaml"
    export_suite_file(store, "weather", exported)
    _, counts = import_suite_file(store, exported)
    assert counts == {"added": 0, "changed": 0, "unchanged": 2, "retired": 0}
    again = tmp_path / "again.yaml"
    export_suite_file(store, "weather", again)
    assert again.read_bytes() == exported.read_bytes()
