"""A deterministic agent whose answers depend on its settings, and suites of variants and trials around it."""

from __future__ import annotations

from pathlib import Path

AGENT = """
import os
import time
import zlib


class Agent:
    def __init__(self, style: str = "plain", delay: float = 0.0, flaky: int = 0) -> None:
        self.style, self.delay, self.flaky = style, delay, flaky

    def respond(self, message: str, session_id: str) -> str:
        time.sleep(self.delay)
        number = int(message.split()[-1])
        case = session_id.split("-", 2)[-1].rsplit("-", 1)[0]  # the case's name, a trial's number included
        if os.environ.get("EXP_AGENT_SHOUT") == "1":
            return f"{number}!"
        if self.flaky and zlib.crc32(case.encode()) % self.flaky == 0:
            return "no idea"
        if self.style == "polite":
            return "no idea" if number % 4 == 0 else f"Sure! answer {number}"
        if self.style == "markup":
            return f"<script>alert({number})</script> answer {number}"
        return f"answer {number}"


def make_agent(style: str = "plain", delay: float = 0.0, flaky: int = 0) -> Agent:
    return Agent(style, delay, flaky)
"""


def write_suite(
    folder: Path, *, cases: int = 12, variants: str | None = None, extra: str = "", name: str = "exp"
) -> Path:
    """A suite of ``cases`` questions ``q0``... judged by ``contains: answer``, with the agent module beside it."""
    (folder / "exp_agent.py").write_text(AGENT, encoding="utf-8")
    listed = "\n".join(
        f"  - name: q{i}\n    prompt: question {i}\n    judges: [{{contains: answer}}]" for i in range(cases)
    )
    if variants is None:
        variants = """variants:
  - name: plain
  - name: polite
    options: {style: polite}
  - name: flaky
    options: {flaky: 3}
"""
    path = folder / "suite.yaml"
    path.write_text(
        f"name: {name}\nagent:\n  python: exp_agent:make_agent\n{extra}{variants}cases:\n{listed}\n", encoding="utf-8"
    )
    return path
