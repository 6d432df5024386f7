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
        "and judge a sample of them with --otlp-judges, as one production run per day.",
    ),
]
OtlpJudgesOption = Annotated[
    Path | None, typer.Option("--otlp-judges", help="The judges file production traces are judged with.")
]
OtlpSuiteOption = Annotated[str, typer.Option("--otlp-suite", help="The suite the production runs are kept under.")]
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
    suite: str,
    rate: float,
    services: list[str] | None,
    roots: list[str] | None,
    attributes: list[str] | None,
) -> Any:
    """The dashboard's ``OtlpSettings`` (imported here: it needs the web extra), or exit 2 on a bad option."""
    from jurybox.web import OtlpSettings

    if judges is None:
        fail("--otlp needs --otlp-judges FILE: the judges production traces are judged with", to=error_console())
    try:
        built = load_judges(judges)
    except (SuiteError, JudgeModelError) as exc:
        fail(str(exc), to=error_console())
    usable = [b for b in built if b.tier != TIER_LLM or getattr(b.judge, "model", None) is not None]
    if len(usable) < len(built):
        error_console().print("note: no judge model: the LLM judges of --otlp-judges are left out")
    if not usable:
        fail("--otlp-judges: no judge is left to run without a judge model", to=error_console())
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
        suite=suite,
        sampler=Sampler(rate=rate, services=tuple(services or ()), root_names=tuple(roots or ()), attributes=pairs),
        redact=redact,
    )
