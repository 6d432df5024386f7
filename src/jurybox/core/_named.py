"""``named(judge, name=..., **metadata)``: a judge under a name of your choosing, with labels.

A judge's metadata is put on it by composition rather than by subclassing:
any judge (a function, a factory's judge, a Jury, a Cascade) is wrapped, and every
judgment it gives carries the name and the metadata, so a report, a cascade's
children and the store all see them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from jurybox.core._context import Context, freeze_mapping
from jurybox.core._judge import aevaluate, judge_name
from jurybox.core._judgment import Judgment


class NamedJudge:
    """A judge with its own name and metadata; see ``named``.

    Attributes:
        judge: The wrapped judge.
        name: The name its judgments carry.
        metadata: Merged into every judgment's ``metadata`` (these keys win over the judge's own).
    """

    def __init__(self, judge: Any, name: str, metadata: Mapping[str, Any]) -> None:
        if not callable(judge):
            raise TypeError(f"named() wraps a judge (a callable); got {type(judge).__name__}: {judge!r:.80}")
        if not isinstance(name, str) or not name.strip():
            raise ValueError(f"named() needs a non-empty name, got {name!r}")
        self.judge = judge
        self.name = name
        self.metadata: Mapping[str, Any] = freeze_mapping(dict(metadata))

    async def __call__(self, context: Context) -> Judgment:
        inner = await aevaluate(self.judge, context)
        return replace(inner, judge=self.name, metadata={**inner.metadata, **self.metadata})

    def __getattr__(self, attribute: str) -> Any:
        # What the runner reads off a judge (threshold, tier, blocking...) is the wrapped judge's.
        if attribute.startswith("__") or attribute == "judge":
            raise AttributeError(attribute)
        return getattr(self.judge, attribute)

    def __repr__(self) -> str:
        return f"named({judge_name(self.judge)!s}, name={self.name!r}, {dict(self.metadata)!r})"


def named(judge: Any, /, *, name: str, **metadata: Any) -> NamedJudge:
    """Give any judge a name and metadata that reach every judgment it returns.

    Args:
        judge: Any judge: a function, a ``@judge``, a factory's judge, a Jury or a Cascade.
        name: The judge's name in judgments, juries, cascades and reports.
        **metadata: Labels added to every judgment's ``metadata`` (owner, version, rationale...).

    Returns:
        A judge that runs ``judge`` and returns its judgment under ``name`` with ``metadata``.

    Example:
        >>> from jurybox.core import Context, evaluate, judge, named
        >>> @judge
        ... def short(ctx):
        ...     return len(ctx.output) < 80
        >>> verdict = evaluate(named(short, name="brevity", owner="docs-team"), Context(output="ok"))
        >>> verdict.judge, verdict.metadata["owner"]
        ('brevity', 'docs-team')
    """
    return NamedJudge(judge, name, metadata)
