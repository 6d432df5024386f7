"""docs/reference.md lists every public name as the packages' ``__all__`` hold them today."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _generator() -> object:
    spec = importlib.util.spec_from_file_location("api_reference", ROOT / "scripts" / "api_reference.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["api_reference"] = module
    spec.loader.exec_module(module)
    return module


def test_the_reference_page_is_current() -> None:
    generator = _generator()
    expected = generator.reference()  # type: ignore[attr-defined]
    actual = (ROOT / "docs" / "reference.md").read_text(encoding="utf-8")
    assert actual == expected, "docs/reference.md is stale: run `.venv/bin/python scripts/api_reference.py`"


def test_every_public_name_has_a_description() -> None:
    page = (ROOT / "docs" / "reference.md").read_text(encoding="utf-8")
    assert "(no docstring)" not in page, [line for line in page.splitlines() if "(no docstring)" in line]


def test_internal_wiring_is_not_public() -> None:
    import jurybox.core

    wiring = {"frozen_heap", "paused_collector", "freeze_for_life", "DaemonThreadPool", "freeze_mapping"}
    assert not wiring & set(jurybox.core.__all__)
    assert all(hasattr(jurybox.core, name) for name in wiring)  # still there for jurybox's own packages
