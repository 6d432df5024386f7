"""Variants that answer alike share their judge calls through the judge cache: each is asked once."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from experiment_helpers import write_suite

from jurybox import runs
from jurybox.stubs import StubServer

_CRITERION = re.compile(r"^- (.+) \(weight [\d.]+\): ", re.MULTILINE)


def grade(body: dict[str, Any]) -> str:
    """A judge model that gives every rubric criterion a good grade."""
    prompt = "\n\n".join(str(m.get("content", "")) for m in body.get("messages", []))
    return json.dumps({"scores": {name: 95 for name in _CRITERION.findall(prompt)}, "reasoning": "meets it"})


def test_identical_judge_calls_of_two_variants_are_made_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("JURYBOX_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("JURYBOX_CACHE", raising=False)
    monkeypatch.setenv("OPENAI_API_KEY", "test")
    variants = (
        "variants:\n  - name: a\n  - name: same\n    env: {EXP_UNUSED: 1}\n"
        "  - name: polite\n    options: {style: polite}\n"
    )
    suite = write_suite(tmp_path, cases=4, variants=variants)
    suite.write_text(suite.read_text().replace("judges: [{contains: answer}]", "criteria: answers the question"))
    with StubServer("openai", reply=grade) as judge:
        request = runs.RunRequest(
            suites=(suite,), store=f"sqlite:///{tmp_path / 'store.db'}", judge_model=f"openai:m@{judge.base_url}"
        )
        with runs.prepare(request) as prepared:
            results = prepared.run()
        asked = len(judge.requests)
    assert [r.total_cases for r in results] == [4, 4, 4]
    # a and same give the same answers: the same judge requests, asked once; polite answers otherwise.
    assert asked == 4 + 4
    assert [r.spend.calls for r in results] == [4, 4, 4]  # each run still counts its judge calls


def test_a_variant_with_its_own_judge_model_is_judged_by_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("JURYBOX_CACHE", "off")
    monkeypatch.delenv("JURYBOX_JUDGE_MODEL", raising=False)
    monkeypatch.setenv("OPENAI_API_KEY", "test")
    with StubServer("openai", reply=grade) as judge:
        variants = f"variants:\n  - name: unjudged\n  - name: judged\n    judge_model: openai:m@{judge.base_url}\n"
        suite = write_suite(tmp_path, cases=3, variants=variants)
        suite.write_text(suite.read_text().replace("judges: [{contains: answer}]", "criteria: answers the question"))
        with runs.prepare(runs.RunRequest(suites=(suite,), no_store=True)) as prepared:
            unjudged, judged = prepared.run()
        assert len(judge.requests) == 3
    assert unjudged.llm_skipped and unjudged.judge_model is None
    assert not judged.llm_skipped and judged.judge_model is not None and judged.spend.calls == 3
