"""``jurybox run``'s judge fleet and shared cache options: ``--judge-endpoint`` and ``--cache``."""

from __future__ import annotations

import os
from typing import Annotated

import typer
from rich.console import Console
from rich.markup import escape

from jurybox.models import CACHE_URL_ENV, ModelConfigError, open_cache
from jurybox.suites import JudgeModelError, judge_model_with_endpoints

JudgeEndpointOption = Annotated[
    list[str] | None,
    typer.Option(
        "--judge-endpoint",
        help="A judge fleet: an OpenAI-compatible server (http://host:port/v1) serving --judge-model, "
        "repeatable; each call goes to the endpoint with the fewest calls in flight.",
        show_default=False,
    ),
]
CacheOption = Annotated[
    str | None,
    typer.Option(
        "--cache",
        help="The judge response cache: a SQLite file, or redis://host:6379/0 or postgresql://user@host/db "
        f"shared by every process and machine of the run (default: ${CACHE_URL_ENV}, else .jurybox/cache).",
        show_default=False,
    ),
]


def fleet_and_cache(judge_model: str | None, endpoints: list[str] | None, cache: str | None) -> str | None:
    """The judge model spec (a fleet's with endpoints), after pointing the run at ``cache``.

    Raises:
        typer.Exit: with code 2 and a one-line error, for endpoints without a model, a bad URL,
            or a cache server that cannot be reached.
    """
    try:
        spec = judge_model_with_endpoints(judge_model, endpoints)
        if cache is not None:
            open_cache(cache).exists()  # an unreachable server is a usage error now, not one per judge call
            # Worker processes and the Ray actors started from here inherit it with the environment.
            os.environ[CACHE_URL_ENV] = cache
    except (JudgeModelError, ModelConfigError) as exc:
        Console(stderr=True).print(f"[red]error:[/] {escape(str(exc))}", highlight=False)
        raise typer.Exit(2) from None
    return spec
