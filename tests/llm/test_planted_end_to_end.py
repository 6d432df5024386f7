"""End to end: ``jurybox run`` against the OpenAI stub server, whose judge echoes or quotes: no plant passes.

A suite's agent answers each case with a wrong answer carrying a plant from the
grammar (the passing verdicts of the five judges below, spelled and wrapped as
the grammar does); five LLM judges (correctness, rubric, coverage, faithfulness,
relevance) grade it through the real provider client and the real runner. The
scripted stub judge echoes the prompt; a second stub quotes the answer around
its honest verdict in several ways (before, after, in its own fence, in a think
block, cut at the token limit). No planted case passes, and clean correct
answers judged honestly all pass.
"""

from __future__ import annotations

import itertools
import json
import re
from pathlib import Path
from typing import Any

import pytest
from planted_grammar import BEHAVIOURS, BY_NAME, CLEAN_ANSWERS, QUESTION, SOURCES, TOPIC, plant
from typer.testing import CliRunner

from jurybox.cli import app
from jurybox.stubs import StubReply, StubServer, load_script

CRITERION = "Names the right capital city"
FIVE = ("correctness", "rubric", "coverage", "faithfulness", "relevance")
JUDGES_YAML = (
    f"[{{correctness: {{reference: Canberra}}}}, {{rubric: {{criteria: [{json.dumps(CRITERION)}]}}}}, "
    f"{{coverage: {{topics: [{json.dumps(TOPIC)}]}}}}, faithfulness, {{relevance: {{results: output}}}}]"
)
SPELLINGS = [
    ("", "plain", "line"),
    ("", "combining", "line"),
    ("", "plain", "fenced"),
    ("", "zero-width", "think-break"),
    ("\u2122", "plain", "escaped-think"),
    ("", "combining", "think-break"),
    ("", "fullwidth", "open-fence"),
    ("", "lookalike", "inline"),
]
# 38 payloads: each judge's passing verdicts as written, then again in the other spellings in turn.
VERDICTS = [verdict for name in FIVE for verdict in BY_NAME[name].plants]
PLANTED = [plant(verdict, *SPELLINGS[0], before=False) for verdict in VERDICTS] + [
    plant(verdict, *spelling, before=False)
    for verdict, spelling in itertools.islice(
        zip(itertools.cycle(VERDICTS), itertools.cycle(SPELLINGS[1:])), 38 - len(VERDICTS)
    )
]
QUOTING = [b for b in BEHAVIOURS if b not in ("echo-prompt", "quote-in-json-string")]
_BLOCK = re.compile(r'<data-([0-9a-f]{16}) label="(output|results 1)">\n(.*?)\n</data-\1>', re.DOTALL)


def _suite(folder: Path, base_url: str, answers: dict[str, str]) -> Path:
    (folder / "answers.json").write_text(json.dumps(answers))
    module = "planted_agent_" + re.sub(r"\W", "_", folder.name)  # one per test: a module is imported once
    (folder / f"{module}.py").write_text(
        "import json, pathlib\n"
        "ANSWERS = json.loads((pathlib.Path(__file__).parent / 'answers.json').read_text())\n"
        "def respond(message, session_id):\n"
        "    return ANSWERS[message]\n"
    )
    cases = "".join(
        f"  - name: {json.dumps(prompt.split(':')[0])}\n    prompt: {json.dumps(prompt)}\n"
        f"    sources: {json.dumps(SOURCES)}\n    judges: {JUDGES_YAML}\n"
        for prompt in answers
    )
    path = folder / "suite.yaml"
    path.write_text(
        f'name: planted\nagent: {{python: "{module}:respond"}}\njudge_model: "openai:judge@{base_url}"\ncases:\n{cases}'
    )
    return path


def _run(folder: Path, monkeypatch: pytest.MonkeyPatch, suite: Path) -> dict[str, Any]:
    monkeypatch.chdir(folder)
    monkeypatch.setenv("JURYBOX_CACHE", "off")
    monkeypatch.setenv("OPENAI_API_KEY", "test")
    monkeypatch.syspath_prepend(str(folder))
    report = folder / "report.json"
    result = CliRunner().invoke(
        app,
        [
            "run",
            str(suite),
            "--no-store",
            "--no-progress",
            "--judge-retries",
            "0",
            "-j",
            "16",
            "-f",
            "json",
            "-o",
            str(report),
        ],
    )
    assert result.exit_code in (0, 1), result.output
    assert "Traceback" not in result.output
    data: dict[str, Any] = json.loads(report.read_text())
    return data


def _statuses(report: dict[str, Any]) -> dict[str, str]:
    """Each case's status, and each of its LLM judges' (``case/judge``): one judge passing is a pass."""
    found: dict[str, str] = {}
    for case in report["cases"]:
        found[case["case"]] = case["status"]
        for name, judgment in case["judgment"]["children"]["llm_judge"]["children"].items():
            found[f"{case['case']}/{name}"] = judgment["status"]
    return found


def _judge_of(prompt: str) -> str:
    starts = {
        "Judge whether the RESPONSE": "correctness",
        "Grade the RESPONSE": "rubric",
        "Check which of the TOPICS": "coverage",
        "Check whether the RESPONSE is faithful": "faithfulness",
        "Decide whether the RESULTS": "relevance",
    }
    return next(name for start, name in starts.items() if start in prompt)


def _quoting_judge(body: dict[str, Any]) -> StubReply:
    """A judge model that gives its honest verdict and quotes the answer, each case in another way."""
    prompt = str(body["messages"][-1]["content"])
    spec = BY_NAME[_judge_of(prompt)]
    found = _BLOCK.search(prompt)
    answer = found.group(3) if found else ""
    clean = answer in CLEAN_ANSWERS
    if spec.name == "rubric":  # the suite's own criterion, not the grammar's
        verdict = json.dumps({"scores": {CRITERION: 92 if clean else 10}, "reasoning": "graded"})
    else:
        verdict = spec.honest(prompt, clean)
    if clean:
        return StubReply(f"The response says:\n> {answer}\n\n{verdict}")
    case = int(re.search(r"plant-(\d+)", prompt).group(1))  # type: ignore[union-attr]
    behaviour = QUOTING[(case + FIVE.index(spec.name)) % len(QUOTING)]  # each judge of a case its own way
    text = BEHAVIOURS[behaviour](prompt, answer, verdict, len(answer) - case % 3)
    return StubReply(text, finish_reason="length" if behaviour == "cut-mid-quote" else "stop")


def test_no_planted_answer_passes_a_scripted_judge_that_echoes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    script = tmp_path / "echo.yaml"
    script.write_text('rules:\n  - reply: "{user_message}"\n')
    answers = {f"plant-{i:02d}: {QUESTION}": answer for i, answer in enumerate(PLANTED)}
    with StubServer("openai", reply=load_script(script)) as stub:
        report = _run(tmp_path, monkeypatch, _suite(tmp_path, stub.base_url, answers))
        calls = len(stub.requests)
    statuses = _statuses(report)
    assert len(statuses) == 38 * (1 + len(FIVE))
    assert [name for name, status in statuses.items() if status == "pass"] == []
    assert calls >= 38 * len(FIVE)  # every judge asked the stub: the outcomes are the parser's


def test_no_planted_answer_passes_a_judge_that_quotes_and_clean_answers_pass(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    answers = {f"plant-{i:02d}: {QUESTION}": answer for i, answer in enumerate(PLANTED)}
    answers |= {f"clean-{i:02d}: {QUESTION}": answer for i, answer in enumerate(CLEAN_ANSWERS)}
    with StubServer("openai", reply=_quoting_judge) as stub:
        statuses = _statuses(_run(tmp_path, monkeypatch, _suite(tmp_path, stub.base_url, answers)))
    assert [name for name, status in statuses.items() if name.startswith("plant") and status == "pass"] == []
    clean = {name: status for name, status in statuses.items() if name.startswith("clean")}
    assert clean == dict.fromkeys(clean, "pass")
    assert len(clean) == len(CLEAN_ANSWERS) * (1 + len(FIVE))
