"""``jurybox serve --otlp``: the options of online evaluation, turned into the dashboard's ``OtlpSettings``."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from jurybox._cli.common import error_console, fail
from jurybox.core import TIER_LLM
from jurybox.pytest_plugin import Redactor
from jurybox.suites import JudgeModelError, SuiteError, load_judges
from jurybox.traces import Sampler

OtlpFlag = Annotated[
    bool,
    typer.Option(
        "--otlp",
        help="Also take OTLP/HTTP traces at /v1/traces (ingest tokens: jurybox web add-user NAME --role ingest) "
        "and judge a sample of them with the stored suite --otlp-suite's judges (or --otlp-judges FILE), "
        "as one production run per suite and day.",
    ),
]
OtlpJudgesOption = Annotated[
    Path | None,
    typer.Option("--otlp-judges", help="A judges file to judge with, instead of the stored suite's own judges."),
]
OtlpSuiteOption = Annotated[
    str | None,
    typer.Option(
        "--otlp-suite",
        help="The stored suite whose judges (judge model, limits) production traces get, and whose production "
        "runs keep them (default with --otlp-judges: production).",
    ),
]
OtlpRouteOption = Annotated[
    list[str] | None,
    typer.Option(
        "--otlp-route",
        help="GLOB=SUITE: traces whose root span's service or name matches GLOB go to that stored suite, "
        "judged with its judges (repeatable; first match wins; others go to --otlp-suite).",
    ),
]
SampleRateOption = Annotated[
    float, typer.Option("--sample-rate", min=0.0, max=1.0, help="Share of traces judged, by trace id.")
]
SampleServiceOption = Annotated[
    list[str] | None, typer.Option("--sample-service", help="Only traces of this service (glob; repeatable).")
]
SampleRootOption = Annotated[
    list[str] | None,
    typer.Option("--sample-root", help="Only traces whose root span has this name (glob; repeatable)."),
]
SampleAttributeOption = Annotated[
    list[str] | None,
    typer.Option("--sample-attribute", help="Only traces whose root span has KEY=VALUE (repeatable)."),
]


def otlp_settings(
    judges: Path | None,
    suite: str | None,
    rate: float,
    services: list[str] | None,
    roots: list[str] | None,
    attributes: list[str] | None,
    routes: list[str] | None = None,
) -> Any:
    """The dashboard's ``OtlpSettings`` (imported here: it needs the web extra), or exit 2 on a bad option.

    With ``--otlp-suite`` alone the judges are the stored suite's, read from the store by the
    worker (``check_stored_suites`` says at start-up whether they load).
    """
    from jurybox.web import OtlpSettings

    if judges is None and suite is None:
        fail(
            "--otlp needs --otlp-suite NAME (a stored suite, whose judges production traces get) or --otlp-judges FILE",
            to=error_console(),
        )
    usable = None if judges is None else _file_judges(judges)
    pairs: dict[str, str] = {}
    for item in attributes or []:
        key, sep, value = item.partition("=")
        if not sep or not key:
            fail(f"--sample-attribute takes KEY=VALUE, got {item!r}", to=error_console())
        pairs[key] = value
    redactor = Redactor()

    def redact(text: str) -> str:
        return str(redactor.redact_body(text))

    return OtlpSettings(
        judges=usable,
        suite=suite or "production",
        routes=tuple(pair for item in routes or () for pair in _route(item)),
        sampler=Sampler(rate=rate, services=tuple(services or ()), root_names=tuple(roots or ()), attributes=pairs),
        redact=redact,
    )


def _file_judges(judges: Path) -> list[Any]:
    try:
        built = load_judges(judges)
    except (SuiteError, JudgeModelError) as exc:
        fail(str(exc), to=error_console())
    usable = [b for b in built if b.tier != TIER_LLM or getattr(b.judge, "model", None) is not None]
    if len(usable) < len(built):
        error_console().print("note: no judge model: the LLM judges of --otlp-judges are left out")
    if not usable:
        fail("--otlp-judges: no judge is left to run without a judge model", to=error_console())
    return usable


def _route(item: str) -> list[tuple[Sampler, str]]:
    """``GLOB=SUITE``: the root span's service, or else its name, matches GLOB (one sampler would need both)."""
    pattern, sep, suite = item.rpartition("=")
    if not sep or not pattern or not suite:
        fail(f"--otlp-route takes GLOB=SUITE, got {item!r}", to=error_console())
    return [(Sampler(services=(pattern,)), suite), (Sampler(root_names=(pattern,)), suite)]


def check_stored_suites(app: Any) -> None:
    """Exit 2 unless every stored suite the server judges with loads now (a typo is found at start-up)."""
    from jurybox.web import SuiteJudgesError, load_suite_judges

    settings = app.state.otlp
    names = [suite for _, suite in settings.routes]
    if settings.judges is None:
        names.insert(0, settings.suite)
    if not names:
        return
    try:
        store = app.state.jurybox.access.store()
        for name in dict.fromkeys(names):
            found = load_suite_judges(store, name)
            if found.left_out:
                error_console().print(
                    f"note: suite {name!r} has no judge model: its LLM judges are left out "
                    f"({', '.join(found.left_out)})",
                    soft_wrap=True,
                )
    except SuiteJudgesError as exc:
        fail(str(exc), to=error_console())
    except Exception as exc:  # the store cannot be read: the worker would wait forever
        fail(f"online evaluation cannot read the stored suites: {exc}", to=error_console())
