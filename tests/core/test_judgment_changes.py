"""``Judgment.with_changes`` gives what ``dataclasses.replace`` gives, for any changes, checking only what changed."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from jurybox.core import Judgment, Status

statuses = st.sampled_from(list(Status)) | st.sampled_from([s.value for s in Status])
changes = st.fixed_dictionaries(
    {},
    optional={
        "status": statuses,
        "score": st.none() | st.booleans() | st.floats(0, 1),
        "reasoning": st.text(max_size=20),
        "judge": st.text(max_size=10),
        "confidence": st.none() | st.floats(0, 1),
        "degraded": st.booleans(),
        "children": st.dictionaries(st.text(max_size=5), st.builds(Judgment, statuses), max_size=2),
        "decided_by": st.none() | st.text(max_size=5),
        "metadata": st.dictionaries(st.text(max_size=5), st.integers() | st.text(max_size=5), max_size=3),
    },
)


@given(changes=changes)
def test_the_same_judgment_as_replace(changes: dict[str, Any]) -> None:
    base = Judgment(
        Status.PASS, score=0.5, reasoning="r", judge="j", metadata={"a": 1}, children={"c": Judgment("fail")}
    )
    assert base.with_changes(**changes) == dataclasses.replace(base, **changes)
    changed = base.with_changes(**changes)
    assert type(changed.metadata) is type(base.metadata) and type(changed.children) is type(base.children)
    assert isinstance(changed.status, Status)


def test_bad_changes_fail_as_replace_fails() -> None:
    base = Judgment(Status.PASS)
    with pytest.raises(ValueError, match="confidence"):
        base.with_changes(confidence=2.0)
    with pytest.raises(TypeError):
        base.with_changes(nonsense=1)


def test_a_subclass_keeps_its_own_checks() -> None:
    @dataclasses.dataclass(frozen=True)
    class Shouting(Judgment):
        def __post_init__(self) -> None:
            super().__post_init__()
            object.__setattr__(self, "reasoning", self.reasoning.upper())

    assert Shouting(Status.PASS).with_changes(reasoning="yo").reasoning == "YO"
