"""``jurybox run --help`` in groups: which panel each of its options is listed in.

Thirty options in one table made a help of 180 lines at 80 columns, every description
squeezed into a narrow column and cut mid-word. Each panel is a table of its own, sized
to its own options, so the descriptions get the width. The panels are assigned here, by
parameter name, so the command's signature (``run.py``) stays as it is.
"""

from __future__ import annotations

import copy
import functools
import inspect
from collections.abc import Callable
from typing import Annotated, Any, get_args, get_origin

from typer.models import ParameterInfo

CASES = "Cases"
JUDGE = "Judge model"
REPORTS = "Reports"
STORE = "Store and resume"
SCALE = "Agent, concurrency and executors"

PANELS: dict[str, str] = {
    "stored_suites": CASES,
    "selectors": CASES,
    "dry_run": CASES,
    "variants": CASES,
    "judge_model": JUDGE,
    "judge_endpoints": JUDGE,
    "cache": JUDGE,
    "no_cache": JUDGE,
    "refresh_cache": JUDGE,
    "judge_timeout": JUDGE,
    "judge_retries": JUDGE,
    "preflight": JUDGE,
    "formats": REPORTS,
    "output": REPORTS,
    "rows": REPORTS,
    "verbose": REPORTS,
    "progress": REPORTS,
    "otel_endpoint": REPORTS,
    "store": STORE,
    "no_store": STORE,
    "resume": STORE,
    "fail_on_regression": STORE,
    "concurrency": SCALE,
    "timeout": SCALE,
    "retries": SCALE,
    "workers": SCALE,
    "executor": SCALE,
    "ray_address": SCALE,
    "actors": SCALE,
}
"""Parameter name -> help panel; an option not named here is listed under typer's "Options"."""

METAVARS: dict[str, str] = {
    "suites": "SUITE.yaml",
    "stored_suites": "NAME",
    "selectors": "PATTERN",
    "variants": "NAME",
    "judge_model": "SPEC",
    "judge_endpoints": "URL",
    "cache": "FILE|URL",
    "judge_timeout": "SECONDS",
    "judge_retries": "N",
    "formats": "FORMAT",
    "output": "PATH",
    "rows": "N",
    "otel_endpoint": "URL",
    "store": "URL",
    "resume": "RUN",
    "concurrency": "N",
    "timeout": "SECONDS",
    "retries": "N",
    "workers": "N",
    "ray_address": "ADDRESS",
    "actors": "N",
}
"""What an option's value is, in a word: ``<list[str]>`` and ``<float range> [0.001<=x<=86400.0]`` said less
in more columns (the bounds are still checked, and out-of-range values get typer's error)."""


def grouped(command: Callable[..., Any], panels: dict[str, str] = PANELS) -> Callable[..., Any]:
    """``command`` with each option of ``panels`` shown in its panel in ``--help``; it runs unchanged."""
    signature = inspect.signature(command, eval_str=True)
    parameters = [
        parameter.replace(
            annotation=_in_panel(parameter.annotation, panels.get(parameter.name), METAVARS.get(parameter.name))
        )
        for parameter in signature.parameters.values()
    ]

    @functools.wraps(command)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        return command(*args, **kwargs)

    wrapper.__signature__ = signature.replace(parameters=parameters)  # type: ignore[attr-defined]
    return wrapper


def _in_panel(annotation: Any, panel: str | None, metavar: str | None) -> Any:
    """``Annotated[T, typer.Option(...)]`` with a copy of the option: listed in ``panel``, its value ``metavar``."""
    if get_origin(annotation) is not Annotated:
        return annotation
    base, *metadata = get_args(annotation)
    moved = []
    for item in metadata:
        if not isinstance(item, ParameterInfo):
            moved.append(item)
            continue
        option = copy.copy(item)  # the Annotated alias may be shared with other commands
        if panel is not None and option.rich_help_panel is None:
            option.rich_help_panel = panel
        if metavar is not None and option.metavar is None:
            option.metavar = metavar
        moved.append(option)
    return Annotated[(base, *moved)]
