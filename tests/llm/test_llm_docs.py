"""docs/llm-judges.md shows each built-in judge's prompt exactly as the code sends it."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from jurybox.llm import _prompts as prompts

DOC = (Path(__file__).resolve().parents[2] / "docs" / "llm-judges.md").read_text(encoding="utf-8")
NAMES = ["CORRECTNESS", "RELEVANCE", "RANKING", "COVERAGE", "RUBRIC", "FAITHFULNESS", "PAIRWISE", "CLARIFICATION"]


@pytest.mark.parametrize("name", NAMES)
def test_docs_show_the_prompt_verbatim(name: str) -> None:
    template = getattr(prompts, name)
    assert textwrap.indent(template.user, "    ") in DOC
    assert template.system == prompts.SYSTEM


def test_docs_show_the_system_message_and_calibration_lines() -> None:
    assert prompts.SYSTEM in DOC and prompts.HARSH in DOC and prompts.FAIR in DOC
