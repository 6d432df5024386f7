"""``jurybox web add-user | users | disable-user`` and ``jurybox reviews queue | export`` on a real store."""

from __future__ import annotations

import json
from pathlib import Path

from store_testkit import make_record
from typer.testing import CliRunner

from jurybox.calibrate import load_labelled_set
from jurybox.cli import app
from jurybox.store import open_store


def _invoke(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, list(args), env={"COLUMNS": "120"})
    return result.exit_code, result.output


def test_add_user_prints_a_token_that_logs_in_and_users_lists_them(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'store.db'}"
    code, output = _invoke("web", "add-user", "pm.alice", "--role", "editor", "--store", url)
    assert code == 0, output
    token = output.strip().splitlines()[-1]
    with open_store(url) as store:
        logged = store.users.log_in(token)
        assert logged is not None and logged[1].user.name == "pm.alice"
    code, output = _invoke("web", "users", "--store", url)
    assert code == 0 and "pm.alice" in output and "editor" in output and "active" in output
    code, output = _invoke("web", "add-user", "pm.alice", "--store", url)
    assert code == 2 and "already a user named 'pm.alice'" in output and "Traceback" not in output
    code, output = _invoke("web", "add-user", "bob", "--role", "root", "--store", url)
    assert code == 2 and "--role must be one of viewer, editor, admin" in output
    code, output = _invoke("web", "disable-user", "pm.alice", "--store", url)
    assert code == 0
    with open_store(url) as store:
        assert store.users.log_in(token) is None


def test_reviews_queue_and_export_a_labelled_set(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'store.db'}"
    with open_store(url) as store:
        run_id = store.runs.begin("suite", cases={"good": {}, "bad": {}})
        store.results.record(run_id, make_record("good"))
        store.results.record(run_id, make_record("bad", llm=False))
        store.finish_run(run_id)
        item = store.reviews.review_queue(run_id=run_id, tiers=["llm_judge"])[0]
    code, output = _invoke("reviews", "queue", "--run", run_id, "--store", url)
    assert code == 0 and output.splitlines()[0].startswith("FAIL") and "bad" in output.splitlines()[0]
    with open_store(url) as store:
        store.reviews.add_review(run_id, item.case, item.path, reviewer="alice", agree=False, label="fail", note="no")
    out = tmp_path / "reviews.jsonl"
    code, output = _invoke("reviews", "export", "-o", str(out), "--store", url)
    assert code == 0 and "Wrote 1 reviewed judgment(s)" in output
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert rows[0]["labels"] == {"alice": "fail"} and rows[0]["metadata"]["notes"] == {"alice": "no"}
    assert load_labelled_set(out).raters == ("alice",)
