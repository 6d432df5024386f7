"""The suite's ``agent:`` checked while loading (and so by ``--dry-run``), not mid-run."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from jurybox.agents import TargetConfigError, make_target
from jurybox.suites._case import seeded_agent
from jurybox.suites._errors import Problem
from jurybox.suites._seed import Seed
from jurybox.suites._yaml import Located


def agent_problems(doc: Located, agent: Mapping[str, Any], base_dir: Path, seeds: Sequence[Seed]) -> list[Problem]:
    """What is wrong with the suite's ``agent:``, found while loading (and so by ``--dry-run``), not mid-run.

    The adapter is built as the runner will build it, seed records included (a Python
    agent's module is imported, its factory or function found; nothing is called or
    connected), and then dropped.
    """
    try:
        make_target(seeded_agent(agent, seeds), base_dir=base_dir)
    except TargetConfigError as exc:
        message = str(exc)
        field, _, text = message.partition(": ")
        if not field.startswith(("agent", "seeds")) or not text:
            field, text = "agent", message
        # line_of falls back to the closest parent the file has (agent.http.url may not be written).
        path = tuple(part for part in field.split(".") if part)
        return [Problem(doc.file, doc.line_of(path), field, text)]
    if seeds and "options" not in agent and "kind" not in agent and _is_respond_function(agent, base_dir):
        # Seeds make the runner call it as a factory, respond(seeds=...): every case would fail.
        message = (
            "seed records are handed to a Python agent factory as its 'seeds' keyword argument, and "
            f"{agent['python']!r} is a respond function: point agent.python at a factory (module:make_agent) "
            "taking seeds=..., or load the seeds into the agent yourself (jurybox.suites.load_seeds)"
        )
        return [Problem(doc.file, doc.line_of(("seeds",)), "seeds", message)]
    return []


def _is_respond_function(agent: Mapping[str, Any], base_dir: Path) -> bool:
    try:
        return getattr(make_target(agent, base_dir=base_dir), "kind", None) == "function"
    except TargetConfigError:  # a factory that needs its seeds= argument, say
        return False
