"""jurybox.core.read_json and read_toml: the standard library's values, refused first when too deep or too big.

``json.loads`` and ``tomllib`` recurse once per level (10,000 levels end in a
RecursionError); the bounded readers measure the text before they call them.
Generated JSON and TOML read back exactly as the standard library reads them;
brackets inside strings and comments do not count; unclosed strings cost one pass.
"""

from __future__ import annotations

import json
import tomllib
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from jurybox.core import MAX_TOML_BYTES, InputLimitError, json_limit_breach, read_json, read_toml, read_toml_file

PROPERTY = settings(max_examples=400, deadline=None, derandomize=True, database=None)

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=6) | st.dictionaries(st.text(max_size=10), inner, max_size=6),
    max_leaves=60,
)


def _depth(value: Any) -> int:
    if isinstance(value, dict):
        return 1 + max((_depth(v) for v in value.values()), default=0)
    if isinstance(value, list):
        return 1 + max((_depth(v) for v in value), default=0)
    return 0


@PROPERTY
@given(value=json_values, indent=st.sampled_from([None, 1, 2]))
def test_json_within_the_limits_reads_as_json_loads_reads_it(value: Any, indent: int | None) -> None:
    text = json.dumps(value, indent=indent)
    assert read_json(text) == json.loads(text)
    assert read_json(text.encode("utf-8")) == json.loads(text)


@PROPERTY
@given(value=json_values)
def test_the_depth_limit_is_exact(value: Any) -> None:
    text = json.dumps(value)
    limit = 3
    if _depth(value) > limit:
        with pytest.raises(InputLimitError, match="nested deeper than 3 levels"):
            read_json(text, max_depth=limit)
    else:
        assert read_json(text, max_depth=limit) == value


@PROPERTY
@given(text=st.text(alphabet=list('[]{}",:\\ 1a'), max_size=40))
def test_any_text_reads_as_json_loads_or_is_refused_by_a_named_limit(text: str) -> None:
    try:
        expected, valid = json.loads(text), True
    except ValueError:
        expected, valid = None, False
    try:
        got = read_json(text, max_depth=4, max_nodes=20)
    except InputLimitError as exc:
        assert "nested deeper than 4 levels" in str(exc) or "more than 20 values" in str(exc)
        return
    except json.JSONDecodeError:
        assert not valid
        return
    assert valid
    assert got == expected


@pytest.mark.parametrize(
    "text",
    ["[" * 10_000 + "]" * 10_000, '{"a":' * 10_000 + "1" + "}" * 10_000, "[" * 10_000],
    ids=["lists", "objects", "unclosed"],
)
def test_ten_thousand_levels_are_refused_not_a_recursion_error(text: str) -> None:
    with pytest.raises(InputLimitError, match="nested deeper than 100 levels"):
        read_json(text)


def test_brackets_in_strings_do_not_count() -> None:
    text = json.dumps(["[" * 500, "{" * 500, 'say "[" and \\ then ['])
    assert read_json(text) == json.loads(text)
    assert json_limit_breach(text) is None


def test_too_many_values_are_refused_before_anything_is_built() -> None:
    with pytest.raises(InputLimitError, match="more than 1,000 values"):
        read_json("[" + "1," * 1_000 + "1]", max_nodes=1_000)
    assert read_json("[" + "1," * 998 + "1]", max_nodes=1_000) == [1] * 999


def test_unclosed_strings_cost_one_pass() -> None:
    # Each quote would start a scan to the end of the text with a pattern that has to close its string.
    text = '"' + '\\"' * 200_000 + "[" * 200
    with pytest.raises((json.JSONDecodeError, InputLimitError)):
        read_json(text)


TOML = """\
[tool.jurybox]
model = "openai:gpt-4o-mini"
tags = ["a", "b]", 'c[']  # brackets [[ in strings and comments ]] do not count
inline = {a = 1, b = [1, 2, [3]]}
text = '''
[[[ not a table ]]]
'''

[[tool.jurybox.items]]
name = "x"
"""


def test_toml_reads_as_tomllib_reads_it() -> None:
    assert read_toml(TOML) == tomllib.loads(TOML)


@pytest.mark.parametrize(
    "text",
    [
        "a = " + "[" * 10_000 + "]" * 10_000,
        "a = " + "{b = " * 10_000 + "1" + "}" * 10_000,
        "a" + ".a" * 10_000 + " = 1",
        "[" + ".".join(["a"] * 10_000) + "]\nx = 1\n",
    ],
    ids=["arrays", "inline-tables", "dotted-keys", "table-header"],
)
def test_deep_toml_is_refused_not_a_recursion_error(text: str) -> None:
    with pytest.raises(InputLimitError, match="nested deeper than 100 levels"):
        read_toml(text)


def test_a_big_toml_file_is_refused_before_it_is_read(tmp_path: Path) -> None:
    path = tmp_path / "pyproject.toml"
    path.write_text("[tool.jurybox]\nx = [" + "1, " * (MAX_TOML_BYTES // 3) + "]\n", encoding="utf-8")
    with pytest.raises(InputLimitError, match="KB TOML limit"):
        read_toml_file(path)


def test_a_toml_file_that_is_not_utf8_is_a_decode_error(tmp_path: Path) -> None:
    path = tmp_path / "pyproject.toml"
    path.write_bytes(b"a = '\xff'\n")
    with pytest.raises(tomllib.TOMLDecodeError, match="not UTF-8"):
        read_toml_file(path)
