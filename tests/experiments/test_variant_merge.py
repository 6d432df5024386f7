"""A variant's ``agent:`` changes merge into the suite's agent mapping into mapping, and never touch the suite's."""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from jurybox.suites._experiment_spec import VariantModel
from jurybox.suites._variants import _merged, _variant_agent

keys = st.sampled_from(["options", "style", "model", "nested", "x", "y"])
leaves = st.one_of(st.integers(), st.text(max_size=5), st.booleans(), st.none())
mappings = st.recursive(
    st.dictionaries(keys, leaves, max_size=4), lambda inner: st.dictionaries(keys, inner, max_size=4), max_leaves=12
)


def lookup(mapping: Any, path: tuple[str, ...]) -> Any:
    for key in path:
        mapping = mapping[key]
    return mapping


def leaf_paths(mapping: dict[str, Any], prefix: tuple[str, ...] = ()) -> list[tuple[tuple[str, ...], Any]]:
    found = []
    for key, value in mapping.items():
        if isinstance(value, dict) and value:
            found += leaf_paths(value, (*prefix, key))
        else:
            found.append(((*prefix, key), value))
    return found


@settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])  # a loaded CI machine draws slowly
@given(mappings, mappings)
def test_every_change_is_in_the_merge_and_the_base_is_untouched(base: dict[str, Any], changes: dict[str, Any]) -> None:
    kept = copy.deepcopy(base)
    merged = _merged(base, changes)
    assert base == kept
    for path, value in leaf_paths(changes):
        if value == {}:
            continue  # an empty mapping merged into a mapping changes nothing
        assert lookup(merged, path) == value


@settings(deadline=None)  # the first call reads the adapter registry
@given(mappings, st.text(min_size=1, max_size=20), st.text(max_size=40))
def test_a_python_variants_settings_land_in_the_factory_options(
    options: dict[str, Any], model: str, prompt: str
) -> None:
    base = {"python": "agent:make", "options": options}
    kept = copy.deepcopy(base)
    agent, problem = _variant_agent(base, VariantModel(name="v", model=model, system_prompt=prompt))
    assert problem is None
    assert agent["options"] == {**options, "model": model, "system_prompt": prompt}
    assert base == kept  # the suite's own agent is left as it was
