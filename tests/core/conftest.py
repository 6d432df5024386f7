"""Counting judges, so tests can prove which judges a jury or cascade actually called."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from jurybox import Context, Judgment


class Counting:
    """A judge returning a fixed judgment and counting its calls."""

    def __init__(self, name: str, judgment: Judgment) -> None:
        self.name = name
        self.judgment = judgment
        self.calls = 0

    def __call__(self, context: Context) -> Judgment:
        self.calls += 1
        return self.judgment


@pytest.fixture
def counting() -> Callable[..., Counting]:
    def make(name: str, status: str = "pass", score: float | None = None) -> Counting:
        judgment = {
            "pass": lambda: Judgment.passed(1.0 if score is None else score, f"{name} ok"),
            "fail": lambda: Judgment.failed(0.0 if score is None else score, f"{name} bad"),
            "abstain": lambda: Judgment.abstained(f"{name} unsure"),
            "error": lambda: Judgment.errored(f"{name} broke"),
        }[status]()
        return Counting(name, judgment)

    return make


@pytest.fixture
def ctx() -> Context:
    return Context(input="What are my listings?", output="Beach House, Mountain Cabin")
