"""Every reader of user input, fed 10,000 levels of nesting: its own clear error naming the file, no RecursionError.

The readers: a suite (``jurybox run --dry-run``), a cases file, a seed, a labelled
set (JSON Lines, YAML, CSV), recorded replies, ``jurybox check``, the
``[tool.jurybox]`` config and a price table, ``jurybox store import``, cassette
replay (pytest plugin and stub server), ``jurybox lint-cassettes``, a stub script,
a JSON report, a coverage report, and answers under test (``valid_json``,
``json_schema``, tool-call arguments). Each deep value is written in the forms
that file takes (JSON brackets, YAML flow and block). The errors must be the
reader's documented one; a RecursionError is none of them.

Also here: the record limits of ``jurybox check`` and ``jurybox calibrate``, and the
node limit seen through ``jurybox run``.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import CliRunner

from jurybox import Context, Status, evaluate
from jurybox.calibrate import CalibrationInputError, load_labelled_set, load_recorded
from jurybox.cli import app
from jurybox.core import contexts_from_jsonl
from jurybox.inputs import CassetteError
from jurybox.judges import CoverageReportError, json_schema, read_coverage, valid_json
from jurybox.models import load_prices
from jurybox.pytest_plugin import CassetteSettings, ConfigError, build_settings, use_cassette
from jurybox.pytest_plugin._lint import lint_file
from jurybox.report import from_json
from jurybox.store import SuiteFileError, read_suite_file
from jurybox.stubs import ScriptError, load_cassette, load_script
from jurybox.suites import SuiteError, load_seed, load_suite

DEPTH = 10_000
JSON_DEEP = "[" * DEPTH + "]" * DEPTH
YAML_DEEP = {
    "flow": JSON_DEEP,
    "block": "\n  " + "- " * DEPTH + "x",
    "keys": "\n" + "".join(f"{' ' * i} k:\n" for i in range(2_000)) + " " * 2_000 + " v",  # 2,000: 2 MB of spaces
}
SUITE = (
    "name: s\nagent: {python: 'toy:agent', kind: function}\n"
    "cases:\n  - {name: a, prompt: hi, judges: [{contains: ok}]}\n"
)
DEEP_PROBLEMS = ("nested deeper than", "nesting depth")


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "toy.py").write_text("def agent(message, session_id):\n    return 'ok'\n", encoding="utf-8")
    (tmp_path / "judge.py").write_text(
        "from jurybox import Judgment\n\ndef judge(ctx):\n    return Judgment.passed()\n"
    )
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delenv("JURYBOX_JUDGE_MODEL", raising=False)
    return tmp_path


def _refused(call: Callable[[], object], error: type[Exception], path: Path) -> str:
    with pytest.raises(error) as caught:
        call()
    message = str(caught.value)
    assert path.name in message, message
    assert any(words in message for words in DEEP_PROBLEMS), message
    return message


def _cli(*args: str) -> str:
    result = CliRunner().invoke(app, list(args))
    assert result.exit_code == 2, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    assert "Traceback" not in result.output
    return " ".join(result.output.split())


@pytest.mark.parametrize("style", sorted(YAML_DEEP))
def test_a_suite(folder: Path, style: str) -> None:
    path = folder / "suite.yaml"
    path.write_text(SUITE + f"metadata: {YAML_DEEP[style]}\n", encoding="utf-8")
    _refused(lambda: load_suite(path), SuiteError, path)
    output = _cli("run", "suite.yaml", "--dry-run", "--no-store")
    assert "suite.yaml:" in output and any(words in output for words in DEEP_PROBLEMS)


def test_a_cases_file(folder: Path) -> None:
    (folder / "suite.yaml").write_text(SUITE + "cases_file: cases.jsonl\n", encoding="utf-8")
    (folder / "cases.jsonl").write_text(
        json.dumps({"name": "b", "prompt": "x"})[:-1] + f', "metadata": {JSON_DEEP}}}\n'
    )
    _refused(lambda: load_suite(folder / "suite.yaml"), SuiteError, folder / "cases.jsonl")


@pytest.mark.parametrize("style", sorted(YAML_DEEP))
def test_a_seed(folder: Path, style: str) -> None:
    path = folder / "seed.md"
    path.write_text(f"---\nid: s1\ntype: fact\nextra: {YAML_DEEP[style]}\n---\nbody\n", encoding="utf-8")
    _refused(lambda: load_seed(path), SuiteError, path)


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("set.jsonl", json.dumps({"id": "1", "output": "x", "label": "pass"})[:-1] + f', "metadata": {JSON_DEEP}}}\n'),
        ("set.yaml", f"rows:\n  - id: '1'\n    output: x\n    label: pass\n    metadata: {JSON_DEEP}\n"),
        ("set.csv", f'id,output,label,tags\n1,x,pass,"{JSON_DEEP}"\n'),
    ],
)
def test_a_labelled_set(folder: Path, name: str, text: str) -> None:
    path = folder / name
    path.write_text(text, encoding="utf-8")
    _refused(lambda: load_labelled_set(path), CalibrationInputError, path)


def test_recorded_replies(folder: Path) -> None:
    path = folder / "recorded.jsonl"
    path.write_text(json.dumps({"id": "1", "judge": "j", "text": "x"})[:-1] + f', "tokens": {JSON_DEEP}}}\n')
    _refused(lambda: load_recorded(path), CalibrationInputError, path)


def test_jurybox_check(folder: Path) -> None:
    (folder / "runs.jsonl").write_text(
        json.dumps({"input": "q", "output": "a"})[:-1] + f', "metadata": {JSON_DEEP}}}\n'
    )
    output = _cli("check", "runs.jsonl", "-j", "judge:judge")
    assert "runs.jsonl:1:" in output and "nested deeper than 100 levels" in output


@pytest.mark.parametrize(
    "text",
    [
        "[tool.jurybox]\nx = " + JSON_DEEP,
        "[tool.jurybox]\nx = " + "{a = " * DEPTH + "1" + "}" * DEPTH,
        "a" + ".a" * DEPTH + " = 1",
    ],
    ids=["arrays", "inline-tables", "dotted-keys"],
)
def test_the_pyproject_config_and_price_table(folder: Path, text: str) -> None:
    path = folder / "pyproject.toml"
    path.write_text(text, encoding="utf-8")
    _refused(lambda: build_settings(pyproject=path, environ={}), ConfigError, path)
    _refused(lambda: load_prices(path), ValueError, path)


@pytest.mark.parametrize("style", sorted(YAML_DEEP))
def test_a_store_import(folder: Path, style: str) -> None:
    path = folder / "suite.yaml"
    path.write_text(SUITE + f"metadata: {YAML_DEEP[style]}\n", encoding="utf-8")
    _refused(lambda: read_suite_file(path), SuiteFileError, path)
    output = _cli("store", "import", "suite.yaml", "--store", f"sqlite:///{folder / 'store.db'}")
    assert "suite.yaml:" in output


@pytest.mark.parametrize("style", sorted(YAML_DEEP))
def test_a_cassette_replayed_and_linted(folder: Path, style: str) -> None:
    path = folder / "cassette.yaml"
    path.write_text(f"version: 1\ninteractions: []\nmetadata: {YAML_DEEP[style]}\n", encoding="utf-8")

    def replay() -> None:
        with use_cassette(path, record_mode="none", settings=CassetteSettings()):
            pass

    _refused(replay, CassetteError, path)
    _refused(lambda: load_cassette(path), CassetteError, path)
    _refused(lambda: lint_file(path), ValueError, path)


def test_a_recorded_body_deep_as_json_is_compared_as_bytes(folder: Path) -> None:
    import httpx

    body = json.dumps({"x": 1})[:-1] + f', "deep": {JSON_DEEP}}}'
    path = folder / "cassette.yaml"
    cassette = {
        "version": 1,
        "interactions": [
            {
                "request": {"method": "POST", "uri": "https://api.example.com/v1/x", "body": body, "headers": {}},
                "response": {"status": {"code": 200, "message": "OK"}, "headers": {}, "body": {"string": "ok"}},
            }
        ],
    }
    path.write_text(json.dumps(cassette), encoding="utf-8")
    with use_cassette(path, record_mode="none", settings=CassetteSettings()), httpx.Client() as client:
        assert client.post("https://api.example.com/v1/x", content=body.encode()).text == "ok"


@pytest.mark.parametrize("style", sorted(YAML_DEEP))
def test_a_stub_script(folder: Path, style: str) -> None:
    path = folder / "replies.yaml"
    path.write_text(f"replies: [ok]\nextra: {YAML_DEEP[style]}\n", encoding="utf-8")
    _refused(lambda: load_script(path), ScriptError, path)


def test_a_json_report_and_a_coverage_report(folder: Path) -> None:
    with pytest.raises(ValueError, match=r"report\.json: refused: nested deeper than 100 levels"):
        from_json(JSON_DEEP, source="report.json")
    path = folder / "coverage.json"
    path.write_text('{"files": ' + JSON_DEEP + "}", encoding="utf-8")
    _refused(lambda: read_coverage(path), CoverageReportError, path)


@pytest.mark.parametrize("judge", [valid_json(), json_schema({"type": "array"})], ids=["valid_json", "json_schema"])
def test_an_answer_under_test(judge: object) -> None:
    verdict = evaluate(judge, Context(input="q", output=JSON_DEEP))
    assert verdict.status is Status.ERROR
    assert "nested deeper than 100 levels" in verdict.reasoning


def test_tool_call_arguments_in_a_recorded_execution() -> None:
    line = json.dumps({"input": "q", "output": "a", "tool_calls": [{"name": "t", "arguments": JSON_DEEP}]})
    with pytest.raises(ValueError, match=r"runs\.jsonl:1: refused: nested deeper than 100 levels"):
        contexts_from_jsonl([line], "runs.jsonl")


def test_jurybox_check_refuses_a_file_over_its_record_limit_at_once(
    folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("jurybox._cli.check.MAX_CHECK_RECORDS", 3)
    (folder / "runs.jsonl").write_text(json.dumps({"input": "q", "output": "a"}) + "\n\n" + "not json\n" * 5)
    output = _cli("check", "runs.jsonl", "-j", "judge:judge")
    assert "runs.jsonl:5: refused: more than 3 records" in output


def test_jurybox_check_lists_the_first_rows_and_counts_them_all(folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("jurybox._cli.check.MAX_TABLE_ROWS", 2)
    (folder / "runs.jsonl").write_text(
        "".join(json.dumps({"input": "q", "output": "a", "metadata": {"case": f"c{i}"}}) + "\n" for i in range(5))
    )
    result = CliRunner().invoke(app, ["check", "runs.jsonl", "-j", "judge:judge"])
    assert result.exit_code == 0, result.output
    assert "c0" in result.output and "c1" in result.output and "c4" not in result.output
    assert "the first 2 of 5 verdicts" in result.output and "5 pass" in result.output


@pytest.mark.parametrize(("name", "limit"), [("set.jsonl", "MAX_ROWS"), ("set.yaml", "MAX_ROWS")])
def test_calibrate_refuses_a_set_over_its_row_limit(
    folder: Path, monkeypatch: pytest.MonkeyPatch, name: str, limit: str
) -> None:
    monkeypatch.setattr(f"jurybox.calibrate._labels.{limit}", 3)
    rows = [{"id": str(i), "output": "x", "label": "pass"} for i in range(5)]
    path = folder / name
    text = "".join(json.dumps(row) + "\n" for row in rows) if name.endswith(".jsonl") else json.dumps({"rows": rows})
    path.write_text(text, encoding="utf-8")
    with pytest.raises(CalibrationInputError, match="refused: more than 3 rows"):
        load_labelled_set(path)


def test_load_recorded_refuses_a_file_over_its_reply_limit(folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("jurybox.calibrate._recorded.MAX_REPLIES", 2)
    path = folder / "recorded.jsonl"
    path.write_text("".join(json.dumps({"id": str(i), "text": "x"}) + "\n" for i in range(4)), encoding="utf-8")
    with pytest.raises(CalibrationInputError, match=r"recorded\.jsonl:3: refused: more than 2 recorded replies"):
        load_recorded(path)


def test_a_suite_over_the_value_limit_is_refused_by_jurybox_run(folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("jurybox.suites._yaml.MAX_INPUT_NODES", 50)
    (folder / "suite.yaml").write_text(SUITE + "metadata:\n  items:\n" + "  - 1\n" * 60, encoding="utf-8")
    output = _cli("run", "suite.yaml", "--dry-run", "--no-store")
    assert "suite.yaml:" in output and "refused: more than 50 values in one document" in output
