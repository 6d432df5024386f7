"""Packages that import their names on first use still give every name they list.

``jurybox.suites`` and ``jurybox.calibrate`` (and the store, models and agents packages)
keep a map of names to the private modules that define them, so a plain run loads less.
A mistyped or stale entry would only fail when a user first touched that name: here every
listed name is fetched, and ``dir()`` still shows it.
"""

import importlib

import pytest

PACKAGES = ["jurybox.suites", "jurybox.calibrate", "jurybox.store", "jurybox.models", "jurybox.agents"]


@pytest.mark.parametrize("package", PACKAGES)
def test_every_listed_name_resolves_and_is_listed_by_dir(package: str) -> None:
    module = importlib.import_module(package)
    names = list(module.__all__)
    assert names, f"{package} lists no names"
    missing = [name for name in names if getattr(module, name, None) is None and name not in vars(module)]
    assert not missing, f"{package}: listed but not importable: {missing}"
    assert set(names) <= set(dir(module)), f"{package}: dir() leaves out {sorted(set(names) - set(dir(module)))}"


@pytest.mark.parametrize("package", PACKAGES)
def test_an_unknown_name_is_an_attribute_error(package: str) -> None:
    module = importlib.import_module(package)
    with pytest.raises(AttributeError, match="no_such_name"):
        module.no_such_name  # noqa: B018
