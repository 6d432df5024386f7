"""`jurybox calibrate --store`, then `jurybox run`: the run's reports show its judge's corrected pass rate.

The judge model is the OpenAI stub server: no network, no key. The calibration
reads recorded replies (no model call); the run asks the stub, which grades an
answer holding "WRONG" as a fail and any other as a pass.
"""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console
from typer.testing import CliRunner

from jurybox._cli.run import RunRequest, execute
from jurybox.cli import app
from jurybox.report import report_from_store, to_html, to_markdown
from jurybox.store import open_store
from jurybox.stubs import StubServer

LABELS = [{"id": f"p{i}", "input": "q", "output": "right", "label": "pass"} for i in range(1, 5)] + [
    {"id": f"f{i}", "input": "q", "output": "wrong", "label": "fail"} for i in range(1, 5)
]
PASSING, FAILING = '{"score": 0.9, "reasoning": "fine"}', '{"score": 0.1, "reasoning": "no"}'
# TPR 3/4 and TNR 3/4: a judge worth correcting. The weak one: TPR 2/4, TNR 1/4.
GOOD_REPLIES = {"p1": PASSING, "p2": PASSING, "p3": PASSING, "p4": FAILING, "f1": FAILING, "f2": FAILING}
GOOD_REPLIES |= {"f3": FAILING, "f4": PASSING}
WEAK_REPLIES = {**GOOD_REPLIES, "p3": FAILING, "f2": PASSING, "f3": PASSING}
AGENT = "ANSWERS = {'a': 'Paris', 'b': 'Rome', 'c': 'WRONG Milan', 'd': 'WRONG Lyon'}\n" + (
    "def respond(message, session_id):\n    return ANSWERS[message]\n"
)


def _suite(folder: Path, base_url: str, *, model: str = "judge", judge: str = "correctness") -> Path:
    cases = "".join(
        f"  - name: case-{k}\n    prompt: {k}\n    reference: the capital\n"
        f"    judges:\n      - {judge}: {{name: strict}}\n"
        for k in "abcd"
    )
    path = folder / f"suite-{model}.yaml"
    path.write_text(
        f"name: capitals-{model}\nagent: {{python: 'capital_agent:respond'}}\n"
        f"judge_model: 'openai:{model}@{base_url}'\ncases:\n{cases}",
        encoding="utf-8",
    )
    return path


def _grade(body: dict[str, Any]) -> str:
    text = "\n".join(str(message.get("content", "")) for message in body.get("messages", []))
    return FAILING if "WRONG" in text else PASSING


@pytest.fixture
def stub() -> Iterator[StubServer]:
    with StubServer("openai", _grade) as server:
        yield server


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setenv("JURYBOX_CACHE", "off")
    monkeypatch.delenv("JURYBOX_JUDGE_MODEL", raising=False)
    (tmp_path / "capital_agent.py").write_text(AGENT, encoding="utf-8")
    (tmp_path / "labels.jsonl").write_text("".join(json.dumps(row) + "\n" for row in LABELS), encoding="utf-8")
    return tmp_path


def _calibrate(folder: Path, stub: StubServer, store: str, replies: dict[str, str]) -> Any:
    recorded = folder / "replies.jsonl"
    recorded.write_text("".join(json.dumps({"id": k, "text": v}) + "\n" for k, v in replies.items()), encoding="utf-8")
    command = ["calibrate", str(folder / "labels.jsonl"), "--judge", "correctness: {name: strict}"]
    command += ["--recorded", str(recorded), "--model", f"openai:judge@{stub.base_url}", "--resamples", "20"]
    return CliRunner().invoke(app, [*command, "--store", store])


def _run(suite: Path, store: str, folder: Path) -> tuple[int, str, dict[str, Any]]:
    out, err = io.StringIO(), io.StringIO()
    request = RunRequest(suites=(suite,), store=store, formats=("console", "json"), output=str(folder), progress=False)
    code = execute(request, console=Console(file=out, width=250), status=Console(file=err, width=250))
    report = json.loads((folder / f"{suite.stem.replace('suite-', 'capitals-')}.json").read_text(encoding="utf-8"))
    return code, out.getvalue(), report


def test_calibrate_then_run_shows_the_corrected_pass_rate_everywhere(folder: Path, stub: StubServer) -> None:
    store_url = f"sqlite:///{folder / 'team.db'}"
    saved = _calibrate(folder, stub, store_url, GOOD_REPLIES)
    assert saved.exit_code == 0, saved.output
    assert f"saved 1 calibration(s) to the store {store_url}" in saved.output
    with open_store(store_url) as store:
        [stored] = store.calibrations.find()
    assert stored.name == "strict" and stored.dataset.endswith("labels.jsonl")
    assert stored.figures["tpr"] == stored.figures["tnr"] == 0.75
    assert (stored.figures["positives"], stored.figures["negatives"], stored.figures["n"]) == (4, 4, 8)

    code, console, report = _run(_suite(folder, stub.base_url), store_url, folder)

    assert code == 1  # two answers fail
    [note] = report["calibrations"]
    assert note["judge"] == "strict" and note["status"] == "corrected" and note["key"] == stored.key
    assert (note["passed"], note["decided"], note["observed"]) == (2, 4, 0.5)
    # Rogan-Gladen: (0.5 + 0.75 - 1) / (0.75 + 0.75 - 1) = 0.5, with an interval around it.
    assert note["corrected"] == pytest.approx(0.5) and note["low"] < 0.5 < note["high"]
    line = "strict: observed 50.0% (2/4), corrected 50.0% ["
    assert "calibration: " + line in console
    with open_store(store_url) as store:
        run = store.runs.latest()
        assert run is not None and run.config["calibrations"][0]["corrected"] == pytest.approx(0.5)
        # Every LLM judge's identity is kept with the run, so a review of its verdict names the same judge.
        [(path, identity)] = run.config["judge_identities"].items()
        assert path.startswith("llm_judge/") and identity["key"] == stored.key and identity["name"] == "strict"
        kept = report_from_store(store, run.id)
    assert kept.calibrations[0].describe() == note["text"]
    assert "- strict: observed 50.0% (2/4), corrected 50.0% \\[" in to_markdown(kept)  # Markdown's [ escaped
    assert "<li>strict: observed 50.0% (2/4), corrected 50.0% [" in to_html(kept)


def test_a_judge_on_another_model_is_flagged_uncalibrated(folder: Path, stub: StubServer) -> None:
    store_url = f"sqlite:///{folder / 'team.db'}"
    assert _calibrate(folder, stub, store_url, GOOD_REPLIES).exit_code == 0

    _, console, report = _run(_suite(folder, stub.base_url, model="bigger"), store_url, folder)

    [note] = report["calibrations"]
    assert note["status"] == "uncalibrated" and note["corrected"] is None
    assert "strict: uncalibrated: its prompt or model changed since its calibration on 20" in console


def test_a_judge_with_another_prompt_under_the_same_name_is_flagged(folder: Path, stub: StubServer) -> None:
    store_url = f"sqlite:///{folder / 'team.db'}"
    assert _calibrate(folder, stub, store_url, GOOD_REPLIES).exit_code == 0

    _, console, report = _run(_suite(folder, stub.base_url, judge="relevance"), store_url, folder)

    [note] = report["calibrations"]
    assert note["judge"] == "strict" and note["status"] == "uncalibrated"
    with open_store(store_url) as store:
        assert note["key"] != store.calibrations.find()[0].key  # the prompt's hash is part of the key
    assert "strict: uncalibrated: its prompt or model changed since" in console


def test_a_weak_judge_gets_no_correction(folder: Path, stub: StubServer) -> None:
    store_url = f"sqlite:///{folder / 'team.db'}"
    assert _calibrate(folder, stub, store_url, WEAK_REPLIES).exit_code == 0

    _, console, report = _run(_suite(folder, stub.base_url), store_url, folder)

    [note] = report["calibrations"]
    assert note["status"] == "too_weak" and note["corrected"] is None
    assert "too weak for a correction: TPR 0.50, TNR 0.25 (TPR + TNR <= 1)" in console


def test_no_store_saves_nothing_and_a_run_without_calibrations_says_nothing(folder: Path, stub: StubServer) -> None:
    store_url = f"sqlite:///{folder / 'team.db'}"
    skipped = CliRunner().invoke(
        app,
        ["calibrate", str(folder / "labels.jsonl"), "--judge", "correctness: {name: strict}", "--no-store"],
    )
    assert "saved" not in skipped.output and not (folder / "team.db").exists()

    _, console, report = _run(_suite(folder, stub.base_url), store_url, folder)

    assert "calibrations" not in report and "calibration:" not in console
    with open_store(store_url) as store:
        run = store.runs.latest()
        assert run is not None and "calibrations" not in run.config


def test_a_store_that_cannot_be_opened_is_a_usage_error(folder: Path, stub: StubServer) -> None:
    failed = _calibrate(folder, stub, "mysql://nowhere/db", GOOD_REPLIES)

    assert failed.exit_code == 2 and "cannot save the calibrations to the store" in failed.output
    assert "Traceback" not in failed.output
