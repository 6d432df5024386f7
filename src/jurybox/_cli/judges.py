"""``jurybox judges``: every judge a suite file can name, with its tier, default pass mark and options."""

from __future__ import annotations

import importlib
import json
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

# Imported for their @judge_factory registrations: the built-in judges.
from jurybox import judges as _judges  # noqa: F401
from jurybox import llm as _llm  # noqa: F401
from jurybox.core import TIERS, JudgeFactory, JudgeRegistry

OWN = "(own)"
LEGEND = (
    "threshold: the judge's default pass mark. A suite's threshold (defaults, case or round) replaces it "
    f"when the entry sets none, except where marked {OWN}: there only the entry's own threshold does."
)


def registered(registry: JudgeRegistry) -> list[JudgeFactory]:
    """The registry's judges in cascade order: by tier, then by name."""
    return sorted(registry, key=lambda entry: (TIERS.index(entry.tier), entry.name))


def threshold_text(entry: JudgeFactory) -> str:
    """``0.7``, ``0.85 (own)`` when a suite's threshold does not replace it, or ``-`` for none."""
    if entry.threshold is None:
        return "-"
    return str(entry.threshold) if entry.suite_threshold else f"{entry.threshold} {OWN}"


def as_json(entries: Iterable[JudgeFactory]) -> list[dict[str, Any]]:
    """What ``--json`` prints: one object per judge."""
    return [
        {
            "name": entry.name,
            "tier": entry.tier,
            "threshold": entry.threshold,
            "suite_threshold": entry.suite_threshold,
            "summary": entry.summary,
            "options": [{"name": option.name, "doc": option.doc} for option in entry.options],
            "extra_options": (
                None
                if entry.extra_options is None
                else {"name": entry.extra_options.name, "doc": entry.extra_options.doc}
            ),
            "factory": f"{entry.factory.__module__}:{entry.factory.__qualname__}",
        }
        for entry in entries
    ]


def markdown_table(entries: Iterable[JudgeFactory]) -> str:
    """The judge table of docs/judges.md (a test keeps the page and the registry in step)."""
    lines = ["| judge | tier | threshold | options |", "| --- | --- | --- | --- |"]
    for entry in entries:
        options = [*entry.options, *([entry.extra_options] if entry.extra_options else [])]
        names = ", ".join(f"`{option.name}`" for option in options) or "-"
        lines.append(f"| `{entry.name}` | {entry.tier} | {threshold_text(entry)} | {names} |")
    return "\n".join(lines) + "\n"


def print_tables(entries: list[JudgeFactory], console: Console) -> None:
    """One table per tier, in the order the tiers run; each option with its one-line doc."""
    for tier in TIERS:
        members = [entry for entry in entries if entry.tier == tier]
        if not members:
            continue
        table = Table(title=f"{tier} ({len(members)})", title_justify="left", show_lines=True)
        table.add_column("judge", no_wrap=True)
        table.add_column("threshold", no_wrap=True)
        table.add_column("options")
        for entry in members:
            options = [*entry.options, *([entry.extra_options] if entry.extra_options else [])]
            lines = [f"[italic]{_plain(entry.summary)}[/]"] if entry.summary else []
            lines += [f"[bold]{escape(option.name)}[/]: {_plain(option.doc)}" for option in options]
            table.add_row(escape(entry.name), threshold_text(entry), "\n".join(lines))
        console.print(table)
    console.print(LEGEND, highlight=False)


def judges(
    json_output: Annotated[bool, typer.Option("--json", help="Print JSON instead of tables.")] = False,
    markdown: Annotated[
        bool, typer.Option("--markdown", help="Print the Markdown table of docs/judges.md instead of tables.")
    ] = False,
    plugin: Annotated[
        list[str] | None,
        typer.Option(
            "--plugin", help="A module of your own judges to list too (imported from the current folder; repeatable)."
        ),
    ] = None,
) -> None:
    """List every judge a suite file can name: its tier, default pass mark (threshold) and options.

    Built-in judges and those registered with @judge_factory in the --plugin modules,
    as a suite's plugins: key imports them.
    """
    import_plugins(plugin or ())
    entries = registered(JudgeRegistry.default())
    if json_output:
        typer.echo(json.dumps(as_json(entries), indent=2))
    elif markdown:
        typer.echo(markdown_table(entries), nl=False)
    else:
        print_tables(entries, Console())


def _plain(doc: str) -> str:
    """A docstring fragment for the terminal: reST's ````code```` shown as ```code```, markup escaped."""
    return escape(doc.replace("``", "`"))


def import_plugins(modules: Iterable[str]) -> None:
    """Import modules of the user's own judges (from the current folder too), as a suite's ``plugins:`` does.

    Raises:
        typer.Exit: code 2, after saying which module failed and why.
    """
    if str(Path.cwd()) not in sys.path:
        sys.path.insert(0, str(Path.cwd()))
    for module in modules:
        try:
            importlib.import_module(module)
        except Exception as exc:  # the plugin's own code runs here: report whatever it raises
            typer.echo(f"error: cannot import plugin {module!r}: {type(exc).__name__}: {exc}", err=True)
            raise typer.Exit(2) from exc


def register(app: typer.Typer) -> None:
    app.command("judges")(judges)
