"""What every deterministic judge shares: a name, its tier, and exceptions turned into ERROR."""

from __future__ import annotations

from abc import ABC, abstractmethod

from jurybox.core import TIER_DETERMINISTIC, Context, Judgment


class DeterministicJudge(ABC):
    """Base for the free, repeatable judges: same Context, same Judgment, no model call.

    Subclasses implement ``check``; ``__call__`` names the result and turns an
    unexpected exception into an ERROR judgment that keeps it.
    """

    kind = "deterministic"
    tier = TIER_DETERMINISTIC
    blocking = False

    def __init__(self, name: str) -> None:
        self.name = name

    @abstractmethod
    def check(self, context: Context) -> Judgment:
        """Judge one execution."""

    def __call__(self, context: Context) -> Judgment:
        try:
            judgment = self.check(context)
        except Exception as exc:
            return Judgment.errored(f"{type(exc).__name__}: {exc}", exception=exc, judge=self.name)
        return judgment.named(self.name)

    def __repr__(self) -> str:
        return f"<judge {self.name}>"


def short(text: str, limit: int = 60) -> str:
    """A quoted preview of text for names and messages."""
    text = text.replace("\n", " ")
    return repr(text if len(text) <= limit else text[: limit - 1] + "…")
