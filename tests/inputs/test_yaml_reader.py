"""jurybox.inputs.read_yaml: yaml.safe_load's values and PyYAML's lines, built from events within the limits.

Generated documents (values dumped in every style) and mutated documents (anchors,
merge keys, tags, block scalars...) must give exactly what ``yaml.safe_load`` gives,
or an error where it errs; the line of every value must be the one PyYAML's node
marks give; deep, wide and alias-expanding documents are refused with an
``InputError`` naming the line, never a RecursionError; and memory stays a small
multiple of the text.
"""

from __future__ import annotations

import copy
import random
import tracemalloc
from collections.abc import Iterator
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from jurybox.inputs import InputError, read_yaml
from jurybox.inputs._yaml import _most_values

_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
PROPERTY = settings(max_examples=400, deadline=None, derandomize=True, database=None)
FUZZ = settings(
    max_examples=1500, deadline=None, derandomize=True, database=None, suppress_health_check=[HealthCheck.too_slow]
)

scalars = (
    st.none()
    | st.booleans()
    | st.integers(-(2**70), 2**70)
    | st.floats(allow_nan=False)
    | st.text(max_size=30)
    | st.sampled_from(["yes", "no", "on", "~", "0x1F", "1_000", "2001-12-14", "<<", "=", "- a", "a: b", "#x", "&a"])
)
values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(st.text(max_size=8) | st.integers(), inner, max_size=5),
    max_leaves=40,
)
styles = st.fixed_dictionaries(
    {
        "default_flow_style": st.sampled_from([None, True, False]),
        "allow_unicode": st.booleans(),
        "width": st.sampled_from([20, 80, 4096]),
    }
)

#: A document with every feature read_yaml builds itself, for the mutation fuzz.
FEATURES = """\
base: &base {x: 1, y: [a, b]}
more: &more {z: 3}
merged:
  <<: [*base, *more]
  y: own
single: {<<: *base}
set: !!set {a, b}
omap: !!omap [{a: 1}, {b: 2}]
pairs: !!pairs [{a: 1}, {a: 2}]
binary: !!binary aGVsbG8=
stamp: 2001-12-14t21:59:43.10-05:00
day: 2002-12-14
numbers: [0x1F, 0o17, 1_000, .inf, -.Inf, .nan, 1e3, +12, -0]
words: [yes, No, on, OFF, ~, null, '', "quoted", !!str 12]
block: |
  line one
  line two
folded: >-
  folded
  text
? complex key
: value
explicit: !!int "42"
alias: *base
"""
TOKENS = [
    "&a ", "*a", "*base", "<<: *base\n", "!!set ", "!!omap ", "!!binary ", "!!int ", "!!float ", "!!bool ",
    "!!timestamp ", "!!str ", "!!seq ", "!!map ", "!!null ", "!foo ", "? ", "- ", ": ", "[", "]", "{", "}", ",",
    "|", ">", "'", '"', "\n", "  ", "---\n", "...\n", "#", "=", "~", "1", "x",
]  # fmt: skip


def mutate(text: str, seed: int) -> str:
    chance = random.Random(seed)
    for _ in range(chance.randint(1, 4)):
        at = chance.randint(0, len(text))
        end = min(len(text), at + chance.randint(0, 12))
        piece = chance.choice(TOKENS)
        kind = chance.choice(["insert", "delete", "replace"])
        text = (
            text[:at] + piece + text[at:]
            if kind == "insert"
            else text[:at] + ("" if kind == "delete" else piece) + text[end:]
        )
    return text


class SpecMergeLoader(_Loader):  # type: ignore[misc,valid-type]
    """PyYAML's safe loader with the YAML merge rule as written: of merged mappings, the earliest key holds.

    (PyYAML 6.0.4 keeps the first of two equal keys only when they are one object, so the later
    mapping wins for a key of more than one character: not a rule to copy.)
    """

    def flatten_mapping(self, node: yaml.MappingNode) -> None:
        merged: list[tuple[yaml.Node, yaml.Node]] = []
        seen: set[Any] = set()
        own = []
        for key_node, value_node in node.value:
            if key_node.tag != "tag:yaml.org,2002:merge":
                own.append((key_node, value_node))
                continue
            sources = value_node.value if isinstance(value_node, yaml.SequenceNode) else [value_node]
            for source in sources:
                if not isinstance(source, yaml.MappingNode):
                    raise yaml.constructor.ConstructorError(None, None, "not a mapping to merge", source.start_mark)
                self.flatten_mapping(source)
                for pair in source.value:
                    if pair[0].value not in seen:
                        seen.add(pair[0].value)
                        merged.append(pair)
        node.value = merged + own


def safe_load(text: str) -> tuple[bool, Any]:
    try:
        return True, yaml.load(text, Loader=SpecMergeLoader)
    except (yaml.YAMLError, ValueError, TypeError, LookupError, AttributeError, OverflowError):
        return False, None


@PROPERTY
@given(value=values, style=styles)
def test_dumped_values_read_back_as_safe_load_reads_them(value: Any, style: dict[str, Any]) -> None:
    text = yaml.safe_dump(value, **style)
    assert repr(read_yaml(text, "v.yaml").data) == repr(yaml.load(text, Loader=_Loader))


@FUZZ
@given(seed=st.integers(0, 2**32 - 1))
def test_mutated_documents_agree_with_safe_load(seed: int) -> None:
    text = mutate(FEATURES, seed)
    ok, expected = safe_load(text)
    try:
        got = read_yaml(text, "m.yaml").data
    except InputError as exc:
        assert exc.source == "m.yaml"
        # Where PyYAML builds it, read_yaml refuses only on purpose: a limit, an anchor defined twice, a
        # collection whose tag does not fit it (PyYAML's !!pairs and !!omap read their items' nodes, tags
        # unseen: `!!omap [!!set {a: 1}]` is a pair there, a set here), or a list or mapping as a key
        # (PyYAML's !!pairs keeps `[{a: 1}: x]` as a pair; keys here are scalars).
        deliberate = (
            "refused",
            "anchor",
            "cannot take the tag",
            "keys are text, numbers or booleans",
            "is a mapping of one key",
            "a merge key (<<) takes a mapping",  # `<<: !!set {a: 1}`: PyYAML merges the node, tag unseen
        )
        assert not ok or any(word in exc.problem for word in deliberate), (text, exc)
        return
    assert ok, text
    assert repr(got) == repr(expected)


def reference_lines(text: str) -> dict[tuple[Any, ...], int]:
    """The line of every value as PyYAML's nodes mark it: a mapping value on its key's line."""
    lines: dict[tuple[Any, ...], int] = {}
    root = yaml.compose(text, Loader=_Loader)
    if root is None:
        return lines
    stack: list[tuple[yaml.Node, tuple[Any, ...], int]] = [(root, (), root.start_mark.line + 1)]
    while stack:
        node, path, line = stack.pop()
        lines[path] = line
        if isinstance(node, yaml.MappingNode):
            stack.extend((value, (*path, str(key.value)), key.start_mark.line + 1) for key, value in node.value)
        elif isinstance(node, yaml.SequenceNode):
            stack.extend((item, (*path, index), item.start_mark.line + 1) for index, item in enumerate(node.value))
    return lines


@PROPERTY
@given(value=values, style=styles)
def test_every_value_has_the_line_pyyaml_marks(value: Any, style: dict[str, Any]) -> None:
    text = yaml.safe_dump(value, **style)
    document = read_yaml(text, "v.yaml")
    for path, line in reference_lines(text).items():
        assert document.lines.nearest(path) == line, (path, text)


@pytest.mark.parametrize(
    "text",
    [
        "x: " + "[" * 10_000 + "]" * 10_000 + "\n",
        "x: " + "{a: " * 10_000 + "1" + "}" * 10_000 + "\n",
        "- " * 10_000 + "x\n",
        "".join("  " * depth + f"k{depth}:\n" for depth in range(1_000)) + "  " * 1_000 + "v: 1\n",
        "a: &a " + "[" * 60 + "]" * 60 + "\nb: " + "[" * 60 + "*a" + "]" * 60 + "\n",  # deep only through the alias
    ],
    ids=["flow-lists", "flow-mappings", "block-lists", "block-mappings", "through-an-alias"],
)
@pytest.mark.parametrize("parser", ["libyaml", "python"])
def test_deep_nesting_is_an_input_error(text: str, parser: str, monkeypatch: pytest.MonkeyPatch) -> None:
    if parser == "python":
        monkeypatch.setattr("jurybox.inputs._yaml._Loader", yaml.SafeLoader)
    with pytest.raises(InputError) as caught:
        read_yaml(text, "deep.yaml")
    assert caught.value.line is not None
    assert "nested deeper than 100 levels" in caught.value.problem or "nesting depth" in caught.value.problem


@pytest.mark.parametrize("length", [50, 5_000])  # a short text is counted as built, a long one by a pass first
def test_too_many_values_are_refused_naming_the_line(length: int) -> None:
    text = "items:\n" + "- 1\n" * length
    with pytest.raises(InputError, match=r"big\.yaml:\d+: refused: more than 40 values") as caught:
        read_yaml(text, "big.yaml", max_nodes=40)
    assert caught.value.line is not None and caught.value.line <= 41


def test_aliases_refuse_a_value_that_contains_itself_and_names_never_defined() -> None:
    with pytest.raises(InputError, match="contains it"):
        read_yaml("a: &a [1, *a]\n", "r.yaml")
    with pytest.raises(InputError, match=r"\*nope names no anchor"):
        read_yaml("a: *nope\n", "r.yaml")
    with pytest.raises(InputError, match="anchors and aliases are not allowed"):
        read_yaml("a: &a 1\n", "r.yaml", anchors=False)


def test_an_alias_is_the_same_object_as_its_anchor() -> None:
    data = read_yaml("a: &a [1, 2]\nb: *a\n", "a.yaml").data
    assert data["a"] is data["b"]


def test_duplicate_keys_are_refused_with_both_lines_when_asked() -> None:
    assert read_yaml("a: 1\na: 2\n", "d.yaml").data == {"a": 2}  # as PyYAML, by default
    with pytest.raises(InputError, match=r"d\.yaml:3: duplicate key 'a' \(first at line 1\)") as caught:
        read_yaml("a: 1\nb: 2\na: 3\n", "d.yaml", duplicate_keys=False)
    assert caught.value.path == ("a",)


def test_extra_tags_build_with_their_constructor_and_unknown_tags_are_errors() -> None:
    text = "t: !!python/tuple [1, 2]\n"
    assert read_yaml(text, "t.yaml", tags={"tag:yaml.org,2002:python/tuple": tuple}).data == {"t": (1, 2)}
    with pytest.raises(InputError, match="python/tuple"):
        read_yaml(text, "t.yaml")
    with pytest.raises(InputError, match=r"python/object/apply:os\.system"):
        read_yaml("x: !!python/object/apply:os.system [echo]\n", "t.yaml")


@pytest.mark.parametrize("text", ["a: !!int abc\n", "a: !!bool maybe\n", "a: !!timestamp later\n", "a: !!float x\n"])
def test_a_wrong_explicit_tag_is_an_input_error_not_a_python_error(text: str) -> None:
    with pytest.raises(InputError, match=r"t\.yaml:1: .* is not a valid"):
        read_yaml(text, "t.yaml")


def test_one_document_only() -> None:
    with pytest.raises(InputError, match=r"s\.yaml:2: expected a single document"):
        read_yaml("a: 1\n---\nb: 2\n", "s.yaml")


def test_oversized_text_is_refused_before_parsing() -> None:
    with pytest.raises(InputError, match="refused: over the"):
        read_yaml("a: 1\n" * 100, "big.yaml", max_bytes=100)


def _nodes(text: str) -> int:
    kinds = (yaml.ScalarEvent, yaml.SequenceStartEvent, yaml.MappingStartEvent, yaml.AliasEvent)
    return sum(isinstance(event, kinds) for event in yaml.parse(text, Loader=_Loader))


@settings(max_examples=3000, deadline=None, derandomize=True, database=None)
@given(text=st.text(alphabet=list(":,-?[{]}!&*|>'\"# \n\tab~"), max_size=14))
def test_the_cheap_bound_on_values_is_never_below_the_count(text: str) -> None:
    try:
        count = _nodes(text)
    except yaml.YAMLError:
        return
    assert count <= _most_values(text)


def _peak(text: str) -> int:
    tracemalloc.start()
    try:
        read_yaml(text, "flat.yaml")
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def _flat_list(items: int) -> Iterator[str]:
    yield "items:\n"
    for index in range(items):
        yield f"- item {index}\n"


@pytest.mark.parametrize(
    ("text", "most"),
    [
        ("".join(_flat_list(100_000)), 12),  # PyYAML's composer: about 60 times the text
        ("items:\n" + "".join(f"- {{a: {i}, b: x}}\n" for i in range(20_000)), 20),
    ],
    ids=["flat-list", "small-mappings"],
)
def test_memory_is_a_small_multiple_of_the_text(text: str, most: int) -> None:
    assert _peak(text) < most * len(text)


@PROPERTY
@given(item=values, copies=st.integers(2, 6), style=styles)
def test_items_that_repeat_read_back_as_safe_load_with_their_lines(
    item: Any, copies: int, style: dict[str, Any]
) -> None:
    # The same plain scalars in every item: the second and later are read from the plain-scalar memo.
    text = yaml.safe_dump([copy.deepcopy(item) for _ in range(copies)], **style)  # copies, not aliases
    document = read_yaml(text, "v.yaml")
    assert repr(document.data) == repr(yaml.load(text, Loader=_Loader))
    for path, line in reference_lines(text).items():
        assert document.lines.nearest(path) == line, (path, text)


def test_repeated_items_are_built_apart_and_each_keeps_its_own_lines() -> None:
    text = "".join(f"- {{name: case-{i}, on: yes, n: 7, <<: {{m: null}}, list: [1]}}\n" for i in range(5))
    data = read_yaml(text, "r.yaml").data
    assert data == yaml.load(text, Loader=_Loader)
    data[0]["list"].append(2)  # one item's list is not another's
    assert data[1]["list"] == [1]
    lines = read_yaml("\n".join(f"- a: {i}\n  b: yes" for i in range(4)) + "\n", "r.yaml").lines
    assert [lines.exact((i, "b")) for i in range(4)] == [2, 4, 6, 8]
