"""``jurybox plugins``: every plug-in installed here, by kind, and the entry points that failed to load."""

from __future__ import annotations

import json
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

# Imported for their registrations: the built-in judges, providers, adapters, executors and formats.
from jurybox import agents as _agents  # noqa: F401
from jurybox import executors as _executors  # noqa: F401
from jurybox import judges as _judges  # noqa: F401
from jurybox import llm as _llm  # noqa: F401
from jurybox import models as _models  # noqa: F401
from jurybox import report as _report  # noqa: F401
from jurybox.core import ENTRY_POINT_GROUP, KIND_WORDS, PLUGIN_KINDS, Plugin, PluginRegistry

KindOption = Annotated[
    list[str] | None,
    typer.Option("--kind", "-k", help=f"Only this kind (repeatable): {', '.join(PLUGIN_KINDS)}.", show_default=False),
]


def describe(plugin: Plugin, registry: PluginRegistry) -> dict[str, Any]:
    """One plug-in as ``--json`` prints it."""
    return {
        "kind": plugin.kind,
        "name": plugin.name,
        "aliases": list(plugin.aliases),
        "summary": plugin.summary,
        "from": plugin.origin,
        "module": plugin.module,
        "lazy": plugin.lazy,
        "extra": plugin.extra,
        "state": registry.status(plugin),
    }


def listing(registry: PluginRegistry, kinds: list[str]) -> dict[str, Any]:
    """What ``jurybox plugins --json`` prints: the plug-ins of each kind asked for, and the failed entry points."""
    plugins = list(registry.plugins())  # discovers the entry points first
    return {
        "entry_point_group": ENTRY_POINT_GROUP,
        "kinds": {kind: [describe(p, registry) for p in plugins if p.kind == kind] for kind in kinds},
        "failed": registry.problems,
    }


def print_tables(data: dict[str, Any], console: Console) -> None:
    """One table per kind (an empty kind says so), then the entry points that failed to load."""
    for kind, members in data["kinds"].items():
        if not members:
            console.print(f"[bold]{KIND_WORDS[kind]}s[/] (0): none installed", highlight=False)
            continue
        table = Table(title=f"{KIND_WORDS[kind]}s ({len(members)})", title_justify="left")
        table.add_column("name", no_wrap=True)
        table.add_column("summary")
        table.add_column("from", no_wrap=True)
        table.add_column("state")
        for member in members:
            aliases = f" ({', '.join(member['aliases'])})" if member["aliases"] else ""
            table.add_row(
                escape(member["name"] + aliases),
                escape(member["summary"]),
                escape(member["from"]),
                escape(member["state"]),
            )
        console.print(table)
    failed = data["failed"]
    if failed:
        console.print(f"[red]entry points that failed to load ({len(failed)}):[/]")
        for problem in failed:
            console.print(f"  {escape(problem)}", highlight=False, soft_wrap=True)


def plugins(
    json_output: Annotated[bool, typer.Option("--json", help="Print JSON instead of tables.")] = False,
    kind: KindOption = None,
) -> None:
    """List the plug-ins installed here by kind: judges, model providers, agent adapters, executors, report formats.

    Each with its aliases, a one-line summary, where it came from (jurybox, or the
    distribution whose 'jurybox' entry point registered it) and its state: loaded, lazy
    (imported when first used) or the extra it needs. Entry points that failed to load
    are listed at the end; nothing else fails for them.
    """
    kinds = list(dict.fromkeys(kind or PLUGIN_KINDS))
    unknown = [each for each in kinds if each not in PLUGIN_KINDS]
    if unknown:
        typer.echo(f"error: unknown kind {unknown[0]!r}; kinds: {', '.join(PLUGIN_KINDS)}", err=True)
        raise typer.Exit(2)
    data = listing(PluginRegistry.default(), kinds)
    if json_output:
        typer.echo(json.dumps(data, indent=2))
    else:
        print_tables(data, Console())


def register(app: typer.Typer) -> None:
    """Add ``jurybox plugins`` to the CLI."""
    app.command("plugins")(plugins)
