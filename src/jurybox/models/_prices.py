"""Token prices (USD per million tokens) and the cost of a call; unknown prices stay unknown (None)."""

from __future__ import annotations

import fnmatch
import os
import re
import threading
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from jurybox.core import InputLimitError, read_toml_file
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


@dataclass
class _PriceState:
    """The process's price tables and what was already looked up (all guarded by ``_lock``)."""

    user: dict[str, Price] = field(default_factory=dict)  # set_price / load_prices
    project: dict[str, Path | None] = field(default_factory=dict)  # working folder -> its pyproject.toml
    project_prices: dict[Path, dict[str, Price]] = field(default_factory=dict)  # pyproject.toml -> its table
    resolved: dict[tuple[str, str, str], Price | None] = field(default_factory=dict)  # (cwd, provider, model)
    generation: int = 0  # set_price / load_prices: what a PriceMemo looked up may be stale


_lock = threading.Lock()
_state = _PriceState()


def set_price(spec: str, *, input: float, output: float) -> None:
    """Set or override the price of ``provider:model`` (USD per million tokens).

    ``spec`` may be a glob, e.g. ``set_price("ollama:*", input=0, output=0)`` to say local
    models are free (otherwise their cost is unknown, never assumed 0).
    """
    if ":" not in spec:
        raise ValueError(f"price spec must look like 'provider:model', got {spec!r}")
    price = Price(float(input), float(output))
    with _lock:
        _state.user[spec] = price
        _state.resolved.clear()  # code beats every table: earlier lookups may be stale now
        _state.generation += 1


def load_prices(pyproject: str | Path) -> int:
    """Read ``[tool.jurybox.prices]`` from a pyproject.toml; returns how many prices were set.

    The table maps ``"provider:model"`` (globs allowed) to ``{input = ..., output = ...}``.
    Prices loaded this way count as set in code (they beat the project's own table).

    Raises:
        ValueError: an entry is malformed (the message names the file and the key).
    """
    table = _read_prices(Path(pyproject))
    with _lock:
        _state.user.update(table)
        _state.resolved.clear()
        _state.generation += 1
    return len(table)


def _read_prices(path: Path) -> dict[str, Price]:
    try:
        data = read_toml_file(path)
    except (tomllib.TOMLDecodeError, InputLimitError) as exc:
        raise ValueError(f"{path}: {exc}") from None
    tool = data.get("tool", {})
    jurybox = tool.get("jurybox", {}) if isinstance(tool, dict) else {}
    table: Any = jurybox.get("prices", {}) if isinstance(jurybox, dict) else None
    if not isinstance(table, dict):
        raise ValueError(f"{path}: [tool.jurybox.prices] must be a table")
    prices: dict[str, Price] = {}
    for spec, entry in table.items():
        where = f"{path}: [tool.jurybox.prices] {spec!r}"
        if not isinstance(entry, dict) or set(entry) != {"input", "output"}:
            raise ValueError(f"{where}: expected {{input = <USD/1M tokens>, output = <USD/1M tokens>}}")
        if not all(isinstance(entry[k], int | float) and not isinstance(entry[k], bool) for k in entry):
            raise ValueError(f"{where}: input and output must be numbers")
        if ":" not in spec:
            raise ValueError(f"{where}: the key must look like 'provider:model'")
        try:
            prices[spec] = Price(float(entry["input"]), float(entry["output"]))
        except ValueError as error:
            raise ValueError(f"{where}: {error}") from error
    return prices


def _project_file(folder: Path) -> Path | None:
    for candidate in (folder / "pyproject.toml", *(parent / "pyproject.toml" for parent in folder.parents)):
        if candidate.is_file():
            return candidate
    return None


def _project_prices(cwd: str) -> dict[str, Price]:
    """The prices of the pyproject.toml nearest to ``cwd``; each file is read once per process."""
    with _lock:
        known = cwd in _state.project
        path = _state.project.get(cwd)
    if not known:
        # Walk up the tree once per working folder, not once per call (cost_of runs on every model call).
        path = _project_file(Path(cwd))
        with _lock:
            loaded = path is None or path in _state.project_prices
        table = {} if loaded or path is None else _read_prices(path)
        with _lock:
            _state.project.setdefault(cwd, path)
            if path is not None:
                _state.project_prices.setdefault(path, table)
    if path is None:
        return {}
    with _lock:
        return _state.project_prices[path]


def get_price(provider: str, model: str) -> Price | None:
    """The price of ``provider:model``: user prices first (exact, then globs), then the built-in table.

    The nearest ``pyproject.toml``'s ``[tool.jurybox.prices]`` (searched from the working
    folder upwards) sits between the two: ``set_price``/``load_prices`` beat it, it beats the
    built-in table. Each answer is remembered until prices are set again.
    """
    cwd = os.getcwd()
    key = (cwd, provider, model)
    with _lock:
        if key in _state.resolved:
            return _state.resolved[key]
    project = _project_prices(cwd)
    spec = f"{provider}:{model}"
    family = f"{provider}:{_SNAPSHOT.sub('', model)}"
    with _lock:
        price = _lookup((_state.user, project), spec, family)
        _state.resolved[key] = price
    return price


def _lookup(tables: tuple[dict[str, Price], ...], spec: str, family: str) -> Price | None:
    # Code (set_price, load_prices) beats the project's pyproject.toml, which beats the built-in table.
    for table in tables:
        for name in (spec, family):
            if name in table:
                return table[name]
        for pattern, price in table.items():
            if fnmatch.fnmatchcase(spec, pattern):
                return price
    return DEFAULT_PRICES.get(spec) or DEFAULT_PRICES.get(family)


class PriceMemo:
    """One model's price for the calls on one event loop: looked up at the first call, and again
    only after prices are set (``set_price``, ``load_prices``).

    ``get_price`` asks the working folder (a system call, which lets another thread take the
    GIL) and takes a lock on every lookup; a run's thousands of judge calls on one loop share
    one lookup instead. A change of working folder while the loop runs is not seen: its calls
    are priced by the folder of its first call (``evaluate()`` and each run start a new loop).
    """

    __slots__ = ("_price", "_seen")

    def __init__(self) -> None:
        self._price: Price | None = None
        self._seen: tuple[_PriceState, int] | None = None

    def cost(self, provider: str, model: str, usage: Usage) -> float | None:
        """USD for one call, or None when the price or the token counts are unknown (as ``cost_of``)."""
        state = _state
        seen = self._seen
        if seen is None or seen[0] is not state or seen[1] != state.generation:
            # The generation is read first: prices set during the lookup make the next call look again.
            self._seen = (state, state.generation)
            self._price = get_price(provider, model)
        price = self._price
        return None if price is None else price.cost(usage)


def cost_of(provider: str, model: str, usage: Usage) -> float | None:
    """USD for one call, or None when the price or the token counts are unknown."""
    price = get_price(provider, model)
    return None if price is None else price.cost(usage)
