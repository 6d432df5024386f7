"""Token prices (USD per million tokens) and the cost of a call; unknown prices stay unknown (None)."""

from __future__ import annotations

import fnmatch
import functools
import re
import threading
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from jurybox.models._types import Usage


@dataclass(frozen=True)
class Price:
    """USD per one million input and output tokens."""

    input: float
    output: float

    def __post_init__(self) -> None:
        if self.input < 0 or self.output < 0:
            raise ValueError(f"prices must be >= 0, got input={self.input} output={self.output}")

    def cost(self, usage: Usage) -> float | None:
        """The cost of ``usage``; None when the provider did not report token counts."""
        if usage.input_tokens is None or usage.output_tokens is None:
            return None
        return (usage.input_tokens * self.input + usage.output_tokens * self.output) / 1_000_000


# List prices as published by OpenAI and Anthropic (standard tier, no batch or cache discounts).
DEFAULT_PRICES: dict[str, Price] = {
    "openai:gpt-5": Price(1.25, 10.0),
    "openai:gpt-5-mini": Price(0.25, 2.0),
    "openai:gpt-5-nano": Price(0.05, 0.40),
    "openai:gpt-4.1": Price(2.0, 8.0),
    "openai:gpt-4.1-mini": Price(0.40, 1.60),
    "openai:gpt-4.1-nano": Price(0.10, 0.40),
    "openai:gpt-4o": Price(2.50, 10.0),
    "openai:gpt-4o-mini": Price(0.15, 0.60),
    "openai:gpt-4-turbo": Price(10.0, 30.0),
    "openai:gpt-3.5-turbo": Price(0.50, 1.50),
    "openai:o3": Price(2.0, 8.0),
    "openai:o3-mini": Price(1.10, 4.40),
    "openai:o4-mini": Price(1.10, 4.40),
    "anthropic:claude-opus-4-5": Price(5.0, 25.0),
    "anthropic:claude-opus-4-1": Price(15.0, 75.0),
    "anthropic:claude-opus-4-0": Price(15.0, 75.0),
    "anthropic:claude-opus-4": Price(15.0, 75.0),
    "anthropic:claude-sonnet-4-5": Price(3.0, 15.0),
    "anthropic:claude-sonnet-4-0": Price(3.0, 15.0),
    "anthropic:claude-sonnet-4": Price(3.0, 15.0),
    "anthropic:claude-3-7-sonnet": Price(3.0, 15.0),
    "anthropic:claude-3-5-sonnet": Price(3.0, 15.0),
    "anthropic:claude-haiku-4-5": Price(1.0, 5.0),
    "anthropic:claude-3-5-haiku": Price(0.80, 4.0),
    "anthropic:claude-3-haiku": Price(0.25, 1.25),
}

# A dated snapshot ("gpt-4o-mini-2024-07-18", "claude-sonnet-4-5-20250929") costs what its family costs.
_SNAPSHOT = re.compile(r"-(\d{4}-\d{2}-\d{2}|\d{8}|latest)$")

_lock = threading.Lock()
_user_prices: dict[str, Price] = {}
_project_prices: dict[str, Price] = {}
_loaded_pyproject: set[Path] = set()


def set_price(spec: str, *, input: float, output: float) -> None:
    """Set or override the price of ``provider:model`` (USD per million tokens).

    ``spec`` may be a glob, e.g. ``set_price("ollama:*", input=0, output=0)`` to say local
    models are free (otherwise their cost is unknown, never assumed 0).
    """
    if ":" not in spec:
        raise ValueError(f"price spec must look like 'provider:model', got {spec!r}")
    with _lock:
        _user_prices[spec] = Price(float(input), float(output))


def load_prices(pyproject: str | Path, *, _into: dict[str, Price] | None = None) -> int:
    """Read ``[tool.jurybox.prices]`` from a pyproject.toml; returns how many prices were set.

    The table maps ``"provider:model"`` (globs allowed) to ``{input = ..., output = ...}``.

    Raises:
        ValueError: an entry is malformed (the message names the file and the key).
    """
    path = Path(pyproject)
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    table: Any = data.get("tool", {}).get("jurybox", {}).get("prices", {})
    if not isinstance(table, dict):
        raise ValueError(f"{path}: [tool.jurybox.prices] must be a table")
    for spec, entry in table.items():
        where = f"{path}: [tool.jurybox.prices] {spec!r}"
        if not isinstance(entry, dict) or set(entry) != {"input", "output"}:
            raise ValueError(f"{where}: expected {{input = <USD/1M tokens>, output = <USD/1M tokens>}}")
        if not all(isinstance(entry[k], int | float) and not isinstance(entry[k], bool) for k in entry):
            raise ValueError(f"{where}: input and output must be numbers")
        if ":" not in spec:
            raise ValueError(f"{where}: the key must look like 'provider:model'")
        try:
            price = Price(float(entry["input"]), float(entry["output"]))
        except ValueError as error:
            raise ValueError(f"{where}: {error}") from error
        with _lock:
            (_user_prices if _into is None else _into)[spec] = price
    return len(table)


@functools.lru_cache(maxsize=16)
def _project_file(folder: Path) -> Path | None:
    for candidate in (folder / "pyproject.toml", *(parent / "pyproject.toml" for parent in folder.parents)):
        if candidate.is_file():
            return candidate
    return None


def _load_project_prices() -> None:
    """Load the nearest pyproject.toml's prices once per file (set_price calls made later still win)."""
    candidate = _project_file(Path.cwd())
    if candidate is None:
        return
    with _lock:
        if candidate in _loaded_pyproject:
            return
        _loaded_pyproject.add(candidate)
    load_prices(candidate, _into=_project_prices)


def get_price(provider: str, model: str) -> Price | None:
    """The price of ``provider:model``: user prices first (exact, then globs), then the built-in table."""
    _load_project_prices()
    spec = f"{provider}:{model}"
    family = f"{provider}:{_SNAPSHOT.sub('', model)}"
    with _lock:
        tables = (dict(_user_prices), dict(_project_prices))
    # Code (set_price, load_prices) beats the project's pyproject.toml, which beats the built-in table.
    for table in tables:
        for name in (spec, family):
            if name in table:
                return table[name]
        for pattern, price in table.items():
            if fnmatch.fnmatchcase(spec, pattern):
                return price
    return DEFAULT_PRICES.get(spec) or DEFAULT_PRICES.get(family)


def cost_of(provider: str, model: str, usage: Usage) -> float | None:
    """USD for one call, or None when the price or the token counts are unknown."""
    price = get_price(provider, model)
    return None if price is None else price.cost(usage)
