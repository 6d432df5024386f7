"""Labelled sets, judge specs, the Python API, the reports and ``jurybox calibrate``."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from jurybox.calibrate import (
    CalibrationInputError,
    CalibrationResult,
    JudgeSpec,
    calibrate,
    judge_spec,
    labelled_set_from_rows,
    load_labelled_set,
    parse_bars,
    recorded_from_rows,
    to_html,
    to_markdown,
)
from jurybox.cli import app
from jurybox.core import Context, judge
from jurybox.llm import Choice, pairwise
from jurybox.models import FakeModel

ROWS = [
    {"id": "1", "input": "2+2?", "output": "4", "label": "pass", "tags": ["math"], "metadata": {"length": "short"}},
    {"id": "2", "input": "capital of France?", "output": "Lyon", "label": "fail", "tags": ["geo"]},
    {
        "id": "3",
        "input": "capital of Italy?",
        "output": "Rome",
        "labels": {"ann": "pass", "bob": "pass"},
        "tags": ["geo"],
    },
    {"id": "4", "input": "3*3?", "output": "6", "labels": {"ann": "fail", "bob": "fail"}, "tags": ["math"]},
]
REPLIES = [
    {
        "id": "1",
        "judge": "strict",
        "text": '{"score": 0.9, "reasoning": "right", "confidence": 0.8}',
        "tokens": 10,
        "cost": 0.01,
    },
    {
        "id": "2",
        "judge": "strict",
        "text": '{"score": 0.8, "reasoning": "<script>alert(1)</script> fine", "confidence": 0.9}',
        "tokens": 10,
        "cost": 0.01,
    },
    {"id": "3", "judge": "strict", "text": "I cannot tell", "tokens": 10, "cost": 0.01},
    {"id": "4", "judge": "strict", "error": "HTTP 503", "tokens": 0, "cost": 0.0},
]


def _write(path: Path, rows: list[dict[str, object]]) -> Path:
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    return path


def test_binary_calibration_counts_undecided_rows_on_their_own() -> None:
    result = calibrate(
        labelled_set_from_rows(ROWS),
        ["correctness: {name: strict}"],
        recorded=recorded_from_rows(REPLIES),
        resamples=100,
    )
    judged = result.judge("strict")
    assert judged.overall.counts == {"n": 4, "unlabelled": 0, "decided": 2, "abstain": 1, "error": 1}
    assert judged.overall.confusion is not None
    assert judged.overall.confusion.columns == ("pass", "fail", "abstain", "error")
    assert judged.overall.confusion.counts == ((1, 0, 1, 0), (1, 0, 0, 1))
    assert judged.figure("tpr").value == 0.5  # the undecided human-pass row is not a true positive
    assert judged.figure("tnr").value == 0.0
    assert judged.figure("accuracy").value == 0.25
    assert judged.usage.tokens == 30 and judged.usage.cost == pytest.approx(0.03)
    assert [d.id for d in judged.disagreements] == ["2"]
    assert result.humans["alpha"].value is not None  # two raters: the human ceiling


def test_result_round_trips_through_json() -> None:
    result = calibrate(
        labelled_set_from_rows(ROWS),
        ["correctness: {name: strict}"],
        recorded=recorded_from_rows(REPLIES),
        resamples=20,
        slices=["tags"],
    )
    data = json.loads(result.to_json(rows=True))
    again = CalibrationResult.from_dict(data)
    assert again.to_dict(rows=True) == data
    identity = data["judges"][0]["identity"]
    assert identity["kind"] == "llm" and len(identity["template_hash"]) == 16 and identity["key"]
    assert set(data["judges"][0]["slices"]["tags"]) == {"geo", "math"}


def test_identity_changes_with_the_prompt_model_or_settings_not_the_name() -> None:
    base = judge_spec("correctness: {threshold: 0.7}").who
    assert judge_spec("correctness: {threshold: 0.7, name: other}").who.key == base.key
    assert judge_spec("correctness: {threshold: 0.8}").who.key != base.key
    assert judge_spec("correctness", model="openai:gpt-4o-mini").who.key != judge_spec("correctness").who.key
    assert judge_spec("relevance").who.template_hash != base.template_hash


def test_labelled_set_errors_name_file_line_and_field(tmp_path: Path) -> None:
    path = _write(
        tmp_path / "set.jsonl",
        [
            {"id": "1", "output": "x", "label": "pass"},
            {"id": "1", "output": "y", "label": "fail"},
            {"id": "3", "output": 5, "label": "pass", "colour": "red"},
            {"id": "4", "output": "z"},
        ],
    )
    with pytest.raises(CalibrationInputError) as caught:
        load_labelled_set(path)
    text = str(caught.value)
    assert f"{path}:3:output: must be text" in text
    assert f"{path}:3:colour: unknown field" in text
    assert f"{path}:4:label: missing" in text
    assert f"{path}:2:id: duplicate id '1'" in text


def test_yaml_aliases_and_oversized_files_are_refused(tmp_path: Path) -> None:
    bomb = tmp_path / "bomb.yaml"
    bomb.write_text("- &a {id: 1, output: x, label: pass}\n- *a\n", encoding="utf-8")
    with pytest.raises(CalibrationInputError, match="anchors and aliases"):
        load_labelled_set(bomb)
    big = _write(tmp_path / "big.jsonl", [{"id": str(i), "output": "x" * 100, "label": "pass"} for i in range(50)])
    with pytest.raises(CalibrationInputError, match="the limit is 1000"):
        load_labelled_set(big, max_bytes=1000)


def test_csv_and_yaml_and_suite_fixtures(tmp_path: Path) -> None:
    csv_file = tmp_path / "set.csv"
    csv_file.write_text(
        'id,input,output,label.ann,label.bob,metadata.length,tags\n1,q,"a, b",4,5,long,"[""x""]"\n2,q,c,2,1,short,y\n',
        encoding="utf-8",
    )
    rows = load_labelled_set(csv_file)
    assert rows.kind == "numeric" and rows.raters == ("ann", "bob")
    assert rows.rows[0].label == 4.5 and rows.rows[0].context.output == "a, b" and rows.rows[0].tags == ("x",)
    suite = tmp_path / "suite.yaml"
    suite.write_text(
        "name: s\nagent: {python: m:f}\ncases:\n"
        "  - name: good-one\n    prompt: hi\n    output: hello\n    label: good\n    judges: [valid_json]\n"
        "  - name: unlabelled\n    prompt: hi\n"
        "  - name: bad-one\n    prompt: hi\n    label: bad\n",
        encoding="utf-8",
    )
    with pytest.raises(CalibrationInputError, match=r"suite.yaml:11:output: a labelled case needs the 'output'"):
        load_labelled_set(suite)
    suite.write_text(suite.read_text(encoding="utf-8") + "    output: nope\n", encoding="utf-8")
    fixtures = load_labelled_set(suite)
    assert [(r.id, r.label, r.context.input) for r in fixtures.rows] == [
        ("good-one", "pass", "hi"),
        ("bad-one", "fail", "hi"),
    ]


def test_live_judges_side_by_side_and_a_jury_by_module_attr() -> None:
    @judge(name="says_four")
    def says_four(ctx: Context) -> bool:
        return "4" in ctx.output

    @judge(name="always")
    def always(ctx: Context) -> bool:
        return True

    result = calibrate(labelled_set_from_rows(ROWS), [says_four, always, "contains: {text: Rome}"], resamples=50)
    assert [j.name for j in result.judges] == ["says_four", "always", "contains(Rome)"] or len(result.judges) == 3
    assert result.judges[0].figure("accuracy").value == 0.75
    assert result.judges[1].figure("tnr").value == 0.0


def test_live_pairwise_judge_runs_both_orders() -> None:
    rows = [
        {"id": "p1", "input": "q", "output_a": "good", "output_b": "bad", "label": "a"},
        {"id": "p2", "input": "q", "output_a": "bad", "output_b": "good", "label": "b"},
    ]
    always_first = pairwise(model=FakeModel("The first is better. [[A]]"), retries=0)
    judged = calibrate(labelled_set_from_rows(rows), [always_first], resamples=20).judges[0]
    # "A" is whichever output was shown first: output_a in order ab, output_b in order ba.
    assert [v.orders for v in judged.verdicts] == [("a", "b"), ("a", "b")]
    assert judged.figure("positional_agreement").value == 0.0
    assert judged.figure("accuracy_ab").value == 0.5 and judged.figure("accuracy").value == 0.0


def test_recorded_pairwise_replies_with_a_second_stage() -> None:
    rows = [{"id": "p1", "output_a": "x", "output_b": "y", "label": "a"}]
    replies = recorded_from_rows(
        [
            {"id": "p1", "order": "ab", "text": "[[A]]"},
            {"id": "p1", "order": "ba", "text": "[[A]]"},
            {"id": "p1", "order": "ab", "stage": 2, "text": "Output (a)"},
            {"id": "p1", "order": "ba", "stage": 2, "text": "Output (b)"},
        ]
    )
    spec = JudgeSpec.recorded(
        "swap", Choice({"A": 1, "B": 0}), Choice({"A": 1, "B": 0}, pattern=r"Output \(([ab])\)"), mode="pairwise"
    )
    judged = calibrate(labelled_set_from_rows(rows), [spec], recorded=replies, resamples=10).judges[0]
    assert judged.verdicts[0].orders == ("a", "a")
    assert judged.figure("accuracy").value == 1.0


def test_recorded_errors_are_all_reported() -> None:
    with pytest.raises(CalibrationInputError) as caught:
        recorded_from_rows([{"id": "1", "order": "xy", "text": "a"}, {"id": "2"}])
    assert "<recorded>:1:order" in str(caught.value) and "<recorded>:2:text" in str(caught.value)
    with pytest.raises(CalibrationInputError, match="no labelled row has id 'zz'"):
        calibrate(
            labelled_set_from_rows(ROWS), ["correctness"], recorded=recorded_from_rows([{"id": "zz", "text": "x"}])
        )


def test_unknown_judges_and_options_are_clear() -> None:
    with pytest.raises(CalibrationInputError, match="unknown judge 'correctnes'"):
        judge_spec("correctnes")
    with pytest.raises(CalibrationInputError, match=r"cannot build judge 'correctness'.*'colour'"):
        judge_spec("correctness: {colour: 1}")
    with pytest.raises(CalibrationInputError, match="cannot import"):
        judge_spec("no_such_module_xyz:judge")


def test_fail_under_parsing() -> None:
    assert parse_bars("kappa=0.6, tnr=0.8", "binary") == {"kappa": 0.6, "tnr": 0.8}
    with pytest.raises(ValueError, match="unknown figure 'kapa'"):
        parse_bars("kapa=0.6", "binary")
    with pytest.raises(ValueError, match="numeric labels have"):
        parse_bars("tnr=0.8", "numeric")
    with pytest.raises(ValueError, match="not a number"):
        parse_bars("kappa=high", "binary")


def test_reports_escape_everything() -> None:
    rows = [{**ROWS[1], "id": '<img src=x onerror="alert(1)">'}]
    replies = [{**REPLIES[1], "id": rows[0]["id"]}]
    result = calibrate(
        labelled_set_from_rows(rows + ROWS[:1]),
        ["correctness: {name: '<b>strict</b>'}"],
        recorded=recorded_from_rows([{**r, "judge": "<b>strict</b>"} for r in [*replies, REPLIES[0]]]),
        resamples=10,
    )
    page = to_html(result)
    assert "<script" not in page and "<img" not in page and "<b>" not in page
    assert "&lt;script&gt;" in page and page.count("<svg") == 2
    assert "<script" not in to_markdown(result)


def test_cli_gate_exit_codes(tmp_path: Path) -> None:
    dataset = _write(tmp_path / "set.jsonl", ROWS)
    recorded = _write(tmp_path / "recorded.jsonl", REPLIES)
    runner = CliRunner()
    base = [
        "calibrate",
        str(dataset),
        "--judge",
        "correctness: {name: strict}",
        "--recorded",
        str(recorded),
        "--resamples",
        "50",
    ]
    html = tmp_path / "report.html"
    ok = runner.invoke(
        app, [*base, "--fail-under", "precision=0.5", "--html", str(html), "--json", str(tmp_path / "r.json")]
    )
    assert ok.exit_code == 0, ok.output
    assert "Cohen's kappa" in ok.output and html.read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
    assert json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))["judges"][0]["identity"]["name"] == "strict"
    below = runner.invoke(app, [*base, "--fail-under", "kappa=0.6,tnr=0.8"])
    assert below.exit_code == 1
    assert "strict: kappa 0.000 < 0.6" in below.output
    bad = runner.invoke(app, [*base, "--fail-under", "kapa=0.6"])
    assert bad.exit_code == 2 and "unknown figure 'kapa'" in bad.output and "Traceback" not in bad.output
    broken = _write(
        tmp_path / "broken.jsonl",
        [{"id": "1", "output": "x", "label": "maybe"}, {"id": "2", "output": "x", "label": "pass"}],
    )
    result = runner.invoke(app, ["calibrate", str(broken), "--judge", "correctness", "--kind", "binary"])
    assert result.exit_code == 2 and re.search(r"broken.jsonl:1:label: 'maybe' is not a binary label", result.output)


def test_console_report_fits_80_columns() -> None:
    from io import StringIO

    from rich.console import Console

    from jurybox.calibrate import to_console

    result = calibrate(
        labelled_set_from_rows(ROWS),
        ["correctness: {name: strict}", "correctness: {name: lenient, threshold: 0.3}", "correctness: {name: third}"],
        recorded=recorded_from_rows(
            [*REPLIES, *({**r, "judge": "lenient"} for r in REPLIES), *({**r, "judge": "third"} for r in REPLIES)]
        ),
        resamples=20,
        slices=["tags"],
    )
    out = StringIO()
    to_console(result, Console(file=out, width=80, color_system=None))
    lines = out.getvalue().splitlines()
    assert max(len(line) for line in lines) <= 80
    assert any("0.50 [" in line for line in lines)  # a figure and its interval on one line


def test_a_jury_named_by_module_attr(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "my_panel.py").write_text(
        "from jurybox.core import Context, Jury, judge\n"
        "@judge(name='has_digit')\ndef has_digit(ctx: Context) -> bool:\n"
        "    return any(c.isdigit() for c in ctx.output)\n"
        "@judge(name='short')\ndef short(ctx: Context) -> bool:\n    return len(ctx.output) < 5\n"
        "panel = Jury(has_digit, short, name='panel')\n",
        encoding="utf-8",
    )
    monkeypatch.chdir(tmp_path)
    judged = calibrate(labelled_set_from_rows(ROWS), ["my_panel:panel"], resamples=10).judges[0]
    assert judged.name == "panel" and judged.identity.kind == "jury"
    assert [m["judge"] for m in judged.identity.settings["members"]] == [
        "has_digit",
        "short",
    ] or judged.identity.settings["members"]
    assert judged.overall.counts["n"] == 4
