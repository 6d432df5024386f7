"""Settings every built-in LLM judge accepts, and the checks that give clear errors for bad ones."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, TypedDict

from jurybox.llm._classifiers import OnConflict
from jurybox.llm._judge import OnParseFailure


class JudgeSettings(TypedDict, total=False):
    """Keyword options shared by the built-in judges (all optional).

    Attributes:
        retries: Extra attempts after an unreadable reply (default 2).
        on_parse_failure: ``"abstain"`` (default) or ``"error"`` when no verdict is readable.
        fallback_score: A neutral score (e.g. 0.5) used when no verdict is reached; the judgment is marked degraded.
        samples: Self-consistency: ask this many times and vote (default 1).
        temperature: Sampling temperature (default 0; 0.7 when samples > 1).
        max_tokens: Reply length limit.
        seed: Sampling seed passed to the model.
        on_conflict: ``"abstain"`` (default) or ``"last"`` when a reply holds different verdicts.
        conversation: Show the earlier turns of the conversation, fenced as data (default true;
            ``relevance`` and ``ranking`` judge retrieved results and default to false).
        conversation_chars: Characters of earlier turns shown at most, newest kept (default 6000).
        use_lessons: Show the stored lessons the runner handed the case, fenced as data (default false).
    """

    retries: int
    on_parse_failure: OnParseFailure
    fallback_score: float | None
    samples: int
    temperature: float | None
    max_tokens: int | None
    seed: int | None
    on_conflict: OnConflict
    conversation: bool
    conversation_chars: int
    use_lessons: bool


def split_settings(settings: JudgeSettings) -> tuple[OnConflict, dict[str, Any]]:
    """The classifier's on_conflict, and the rest as LLMJudge keyword arguments."""
    rest: dict[str, Any] = dict(settings)
    # Abstain by default: a reply quoting the answer's planted verdict beside its own must not pick either.
    on_conflict = rest.pop("on_conflict", "abstain")
    if on_conflict not in ("last", "abstain"):
        raise ValueError(f"on_conflict must be 'last' or 'abstain', got {on_conflict!r}")
    return on_conflict, rest


def check_text(judge: str, option: str, value: Any, *, optional: bool = True) -> None:
    if value is None and optional:
        return
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"{judge}: {option} must be a non-empty string, got {value!r}")


def check_positive_int(judge: str, option: str, value: Any) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{judge}: {option} must be a whole number >= 1, got {value!r}")


def check_unit(judge: str, option: str, value: Any, *, allow_zero: bool = True) -> None:
    numeric = isinstance(value, int | float) and not isinstance(value, bool)
    if not numeric or not ((value >= 0.0 if allow_zero else value > 0.0) and value <= 1.0):
        bounds = "0..1" if allow_zero else "(0, 1]"
        raise ValueError(f"{judge}: {option} must be a number in {bounds}, got {value!r}")


def check_texts(judge: str, option: str, value: Any) -> list[str]:
    if isinstance(value, str) or not isinstance(value, Sequence) or not value:
        raise ValueError(f"{judge}: {option} must be a non-empty list of strings, got {value!r}")
    for item in value:
        if not isinstance(item, str) or not item.strip():
            raise ValueError(f"{judge}: every item of {option} must be a non-empty string, got {item!r}")
    return list(value)
