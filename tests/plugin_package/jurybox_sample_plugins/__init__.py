"""A package outside jurybox that adds one plug-in of every kind, as an installed distribution does.

Its ``jurybox`` entry point names this module (tests/plugin_package/test_outside_plugins.py
writes the ``.dist-info`` that says so); importing it registers:

- the ``stubwire`` model provider (an OpenAI-compatible server at ``$JURYBOX_SAMPLE_BASE_URL``),
  by import path, so the openai SDK is imported only when a spec names it;
- the ``echo`` agent adapter (``agent: {echo: {prefix: ...}}``);
- the ``serial`` executor (one case at a time, each name written to ``$JURYBOX_SAMPLE_LOG``);
- the ``csv`` report format (``--format csv``);
- the ``sample_mentions`` judge;
- the ``needs_sdk`` agent adapter, whose module needs a package that is not installed.
"""

from __future__ import annotations

import csv
import io
import os
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from jurybox import Context, Judgment, judge_factory
from jurybox.agents import AgentAdapter, AgentReply, TargetConfigError, register_adapter
from jurybox.core import KIND_EXECUTOR, PluginRegistry
from jurybox.engine import CaseDone, RunOptions, SuiteRunner, TakeResult
from jurybox.executors import LocalExecutor
from jurybox.models import register_provider
from jurybox.report import ReportFormat, RunReport, register_report_format

LOG_VARIABLE = "JURYBOX_SAMPLE_LOG"

register_provider(
    "stubwire",
    "jurybox_sample_plugins.provider:StubWireModel",
    key_variable="JURYBOX_SAMPLE_API_KEY",
    base_url_variable="JURYBOX_SAMPLE_BASE_URL",
    openai_compatible=True,
    summary="an OpenAI-compatible server at $JURYBOX_SAMPLE_BASE_URL",
)


class EchoTarget:
    """An agent that answers each message with a prefix and the message."""

    def __init__(self, prefix: str, name: str) -> None:
        self.prefix = prefix
        self.name = name

    async def respond(self, message: str, session_id: str) -> AgentReply:
        return AgentReply(text=f"{self.prefix}{message}")

    async def close_session(self, session_id: str) -> None:
        return None

    async def aclose(self) -> None:
        return None


def _echo(settings: Mapping[str, Any], *, name: str | None, base_dir: Path | None, spec: Any) -> EchoTarget:
    prefix = settings.get("prefix", "")
    if not isinstance(prefix, str):
        raise TargetConfigError(f"agent.echo.prefix: expected a string, got {prefix!r}")
    return EchoTarget(prefix, name or "echo")


register_adapter(
    "echo",
    AgentAdapter(
        build=_echo,
        settings_schema={
            "type": "object",
            "properties": {"prefix": {"type": "string", "description": "Put before every answer."}},
            "additionalProperties": False,
        },
    ),
    summary="answers every message with a prefix and the message",
)
register_adapter(
    "needs_sdk",
    "jurybox_sample_plugins.needs_sdk:ADAPTER",
    summary="an adapter whose SDK is not installed here",
    extra="sdk",
    requires=("jurybox_sample_absent_sdk",),
)


class SerialExecutor(LocalExecutor):
    """The cases one at a time in this process, each name written to ``$JURYBOX_SAMPLE_LOG`` as it finishes."""

    def __init__(self, runner: SuiteRunner) -> None:
        super().__init__(runner.case_executor, 1)
        self._log = Path(os.environ[LOG_VARIABLE]) if os.environ.get(LOG_VARIABLE) else None

    async def run(self, take: TakeResult) -> None:
        async def logged(done: CaseDone) -> None:
            if self._log is not None:
                with self._log.open("a", encoding="utf-8") as log:
                    log.write(f"{done.case}\n")
            await take(done)

        await super().run(logged)


class SerialPlugin:
    """The cases one at a time in this process (a sample executor from outside jurybox)."""

    def check_options(self, options: RunOptions) -> None:
        if options.workers > 1:
            raise ValueError("the serial executor runs every case in this process; drop --workers")

    def check(self, options: RunOptions, *, has_store: bool, own_target: bool) -> None:
        """Any suite runs here."""

    def create(self, runner: SuiteRunner, todo: int) -> SerialExecutor:
        return SerialExecutor(runner)


PluginRegistry.default().register(KIND_EXECUTOR, "serial", SerialPlugin(), aliases=("one_by_one",))


def _csv(report: RunReport) -> Iterator[str]:
    yield "case,status,output\n"
    for case in report.cases:
        row = io.StringIO()
        output = case.record.context.output if case.record.context is not None else ""
        csv.writer(row, lineterminator="\n").writerow([case.name, case.status.value, output])
        yield row.getvalue()


register_report_format("csv", ReportFormat(".csv", _csv), summary="one row per case: name, status, output")


@judge_factory("sample_mentions")
def sample_mentions(word: str, *, name: str = "sample_mentions") -> Any:
    """Pass when the output mentions ``word``.

    Args:
        word: The word to look for.
        name: The judge's name in reports.
    """

    def check(context: Context) -> Judgment:
        found = word.lower() in context.output.lower()
        return Judgment.passed(1.0, f"mentions {word}") if found else Judgment.failed(0.0, f"no {word}")

    check.name = name  # type: ignore[attr-defined]
    return check
