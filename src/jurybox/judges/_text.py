"""Judges on the output text: equals, contains, regex, prefix and difflib similarity."""

from __future__ import annotations

import difflib
import re
from collections.abc import Sequence

from jurybox.core import TIER_DETERMINISTIC, Check, Context, Judgment, NumericScore, judge_factory
from jurybox.judges._base import DeterministicJudge, short

DEFAULT_SIMILARITY = 0.85


def _reference(given: str | None, context: Context, judge: str) -> str:
    if given is not None:
        return given
    if context.expected is None:
        raise ValueError(f"{judge} needs a reference: pass one to the judge or set Context.expected")
    return context.expected


class _Equals(DeterministicJudge):
    def __init__(self, expected: str | None, case_sensitive: bool, strip: bool, name: str) -> None:
        super().__init__(name)
        self.expected = expected
        self.case_sensitive = case_sensitive
        self.strip = strip

    def _norm(self, text: str) -> str:
        text = text.strip() if self.strip else text
        return text if self.case_sensitive else text.casefold()

    def check(self, context: Context) -> Judgment:
        expected = _reference(self.expected, context, "equals")
        if self._norm(context.output) == self._norm(expected):
            return Judgment.passed(True, "output equals the expected text")
        return Judgment.failed(False, f"output {short(context.output)} differs from expected {short(expected)}")


@judge_factory(tier=TIER_DETERMINISTIC)
def equals(
    expected: str | None = None, *, case_sensitive: bool = True, strip: bool = True, name: str | None = None
) -> DeterministicJudge:
    """Pass when the output equals ``expected`` (default: ``Context.expected``).

    Args:
        expected: The exact text; None uses the Context's reference.
        case_sensitive: Compare case as well.
        strip: Ignore leading and trailing whitespace.
        name: The judge's name in reports.
    """
    return _Equals(expected, case_sensitive, strip, name or (f"equals({short(expected)})" if expected else "equals"))


class _Contains(DeterministicJudge):
    def __init__(self, texts: Sequence[str], require_all: bool, case_sensitive: bool, name: str) -> None:
        super().__init__(name)
        self.texts = tuple(texts)
        self.require_all = require_all
        self.case_sensitive = case_sensitive

    def check(self, context: Context) -> Judgment:
        haystack = context.output if self.case_sensitive else context.output.casefold()
        checks = []
        for text in self.texts:
            needle = text if self.case_sensitive else text.casefold()
            found = needle in haystack
            checks.append(Check(f"contains {short(text)}", found, "found" if found else "not found in output"))
        found_count = sum(c.passed for c in checks)
        missing = [t for t, c in zip(self.texts, checks, strict=True) if not c.passed]
        score = NumericScore(found_count, 0, len(self.texts))
        ok = found_count == len(self.texts) if self.require_all else found_count > 0
        need = "all" if self.require_all else "any"
        if ok:
            return Judgment.passed(score, f"found {found_count} of {len(self.texts)} ({need} needed)", checks=checks)
        reason = f"missing {', '.join(short(t) for t in missing)}" if self.require_all else "none of the texts found"
        return Judgment.failed(score, f"{reason} ({need} of {len(self.texts)} needed)", checks=checks)


@judge_factory(tier=TIER_DETERMINISTIC)
def contains(
    text: str | Sequence[str], *, all: bool = False, case_sensitive: bool = False, name: str | None = None
) -> DeterministicJudge:
    """Pass when the output contains the text (or any / all of several texts).

    Args:
        text: One text or a list of texts.
        all: Require every text (default: any one is enough).
        case_sensitive: Match case (default: ignore case).
        name: The judge's name in reports.
    """
    texts = [text] if isinstance(text, str) else list(text)
    if not texts or not all_strings(texts):
        raise ValueError(f"contains() needs a non-empty text or list of texts, got {text!r}")
    label = ", ".join(short(t, 30) for t in texts)
    return _Contains(texts, all, case_sensitive, name or f"contains({label})")


def all_strings(values: Sequence[object]) -> bool:
    return all(isinstance(v, str) and v for v in values)


class _Matches(DeterministicJudge):
    def __init__(self, pattern: re.Pattern[str], full: bool, name: str) -> None:
        super().__init__(name)
        self.pattern = pattern
        self.full = full

    def check(self, context: Context) -> Judgment:
        found = self.pattern.fullmatch(context.output) if self.full else self.pattern.search(context.output)
        if found:
            return Judgment.passed(True, f"/{self.pattern.pattern}/ matched output at {found.span()}")
        where = "the whole output" if self.full else "anywhere in the output"
        return Judgment.failed(False, f"/{self.pattern.pattern}/ did not match {where}")


@judge_factory(tier=TIER_DETERMINISTIC)
def matches(pattern: str, *, flags: int = 0, full: bool = False, name: str | None = None) -> DeterministicJudge:
    """Pass when the regular expression is found in the output (or matches all of it with ``full``).

    Args:
        pattern: The regular expression (Python syntax).
        flags: ``re`` flags, e.g. ``re.IGNORECASE``.
        full: The whole output must match, not just a part of it.
        name: The judge's name in reports.

    Raises:
        ValueError: the pattern does not compile (the message says where).
    """
    try:
        compiled = re.compile(pattern, flags)
    except re.error as exc:
        raise ValueError(f"invalid regular expression {pattern!r}: {exc}") from exc
    return _Matches(compiled, full, name or f"matches(/{pattern}/)")


class _StartsWith(DeterministicJudge):
    def __init__(self, prefix: str, case_sensitive: bool, name: str) -> None:
        super().__init__(name)
        self.prefix = prefix
        self.case_sensitive = case_sensitive

    def check(self, context: Context) -> Judgment:
        output = context.output.lstrip()
        ok = (
            output.startswith(self.prefix)
            if self.case_sensitive
            else output.casefold().startswith(self.prefix.casefold())
        )
        if ok:
            return Judgment.passed(True, f"output starts with {short(self.prefix)}")
        return Judgment.failed(
            False, f"output starts with {short(output[: len(self.prefix) + 10])}, not {short(self.prefix)}"
        )


@judge_factory(tier=TIER_DETERMINISTIC)
def starts_with(prefix: str, *, case_sensitive: bool = True, name: str | None = None) -> DeterministicJudge:
    """Pass when the output (leading whitespace ignored) starts with ``prefix``.

    Args:
        prefix: The text the output must start with.
        case_sensitive: Match case (default: yes).
        name: The judge's name in reports.
    """
    if not prefix:
        raise ValueError("starts_with() needs a non-empty prefix")
    return _StartsWith(prefix, case_sensitive, name or f"starts_with({short(prefix)})")


class _Similar(DeterministicJudge):
    def __init__(self, reference: str | None, threshold: float, name: str) -> None:
        super().__init__(name)
        self.reference = reference
        self.threshold = threshold

    def check(self, context: Context) -> Judgment:
        reference = _reference(self.reference, context, "similar")
        ratio = difflib.SequenceMatcher(None, context.output, reference, autojunk=False).ratio()
        reason = f"difflib ratio {ratio:.3f} vs threshold {self.threshold:g}"
        if ratio >= self.threshold:
            return Judgment.passed(ratio, reason)
        return Judgment.failed(ratio, reason)


# A character-level ratio, not a graded score: a suite's pass mark for graded judges does not apply to it.
@judge_factory(tier=TIER_DETERMINISTIC, suite_threshold=False)
def similar(
    reference: str | None = None, *, threshold: float = DEFAULT_SIMILARITY, name: str | None = None
) -> DeterministicJudge:
    """Pass when the output's difflib similarity ratio to the reference reaches ``threshold``.

    This is character-level similarity, good for "did the answer stay close to
    the recorded one". For meaning, use ``jurybox.llm.similarity`` (embeddings)
    or an LLM judge.

    Args:
        reference: The text to compare to; None uses ``Context.expected``.
        threshold: Pass mark in 0..1 (default 0.85).
        name: The judge's name in reports.
    """
    if isinstance(threshold, bool) or not isinstance(threshold, int | float) or not 0.0 <= threshold <= 1.0:
        raise ValueError(f"similar(threshold=...) must be in 0..1, got {threshold!r}")
    return _Similar(reference, float(threshold), name or f"similar(>={threshold:g})")
