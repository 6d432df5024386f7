"""``jurybox run``'s judge fleet and cache options: ``--judge-endpoint``, ``--cache``, ``--no-cache``...

``--refresh-cache`` too: every option that says where judge replies come from.
"""

from __future__ import annotations

import os
from typing import Annotated

import typer
from rich.console import Console
from rich.markup import escape

from jurybox.models import CACHE_MODE_ENV, CACHE_URL_ENV, ModelConfigError, open_cache
from jurybox.suites import JudgeModelError, judge_model_with_endpoints

JudgeEndpointOption = Annotated[
    list[str] | None,
    typer.Option(
        "--judge-endpoint",
        help="A judge fleet: one more OpenAI-compatible server (http://host:port/v1) serving "
        "--judge-model; repeatable.",
        show_default=False,
    ),
]
CacheOption = Annotated[
    str | None,
    typer.Option(
        "--cache",
        help="The judge reply cache: a SQLite file, redis://host:6379/0 or postgresql://user@host/db "
        f"(default: ${CACHE_URL_ENV}, else .jurybox/cache).",
        show_default=False,
    ),
]

NoCacheOption = Annotated[
    bool,
    typer.Option(
        "--no-cache",
        help="Ask the judge model every time: no reply is read from or written to the cache.",
        rich_help_panel="Judge model",
    ),
]
RefreshCacheOption = Annotated[
    bool,
    typer.Option(
        "--refresh-cache",
        help="Ask the judge model again and overwrite the cached replies (after changing the judge).",
        rich_help_panel="Judge model",
    ),
]


def use_cache_mode(no_cache: bool, refresh_cache: bool) -> None:
    """Turn the response cache off (``--no-cache``) or make it re-ask (``--refresh-cache``) for this run.

    Set in the environment, so worker processes and Ray actors started from here do the same.

    Raises:
        typer.Exit: with code 2 when both are given.
    """
    if no_cache and refresh_cache:
        Console(stderr=True).print(
            "[red]error:[/] --no-cache and --refresh-cache contradict each other: give one", highlight=False
        )
        raise typer.Exit(2)
    if no_cache:
        os.environ[CACHE_MODE_ENV] = "off"
    elif refresh_cache:
        os.environ[CACHE_MODE_ENV] = "refresh"


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
