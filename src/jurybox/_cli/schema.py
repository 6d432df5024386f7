"""``jurybox schema suite``: the JSON Schema of suite files, for editors that complete and check YAML."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from jurybox._cli.judges import import_plugins
from jurybox.suites import suite_schema

EXIT_USAGE = 2

schema_app = typer.Typer(
    name="schema",
    help="JSON Schemas of jurybox's files, for editors (docs/suites.md: the yaml-language-server line).",
    no_args_is_help=True,
)


@schema_app.command("suite")
def suite(
    output: Annotated[
        Path | None,
        typer.Option(
            "--output", "-o", help="Write the schema to this file (default: standard output).", show_default=False
        ),
    ] = None,
    plugin: Annotated[
        list[str] | None,
        typer.Option(
            "--plugin",
            help="A module of your own judges to describe too, as a suite's plugins: names it "
            "(imported from the current folder; repeatable).",
        ),
    ] = None,
) -> None:
    """Write the JSON Schema (draft 2020-12) of suite files: every key, judge and agent adapter installed here.

    Judges and adapters an installed plug-in registers are in it too, each judge with its
    options and their docs; --plugin adds the judges of a suite's plugins: modules. Point
    an editor at it with a first line ``# yaml-language-server: $schema=suite.schema.json``.
    """
    import_plugins(plugin or ())
    text = json.dumps(suite_schema(), indent=2, ensure_ascii=False) + "\n"
    if output is None:
        typer.echo(text, nl=False)
        return
    try:
        output.parent.mkdir(parents=True, exist_ok=True)
        output.write_text(text, encoding="utf-8")
    except OSError as error:
        typer.echo(f"error: cannot write {output}: {error}", err=True)
        raise typer.Exit(EXIT_USAGE) from error
    typer.echo(f"wrote {output}", err=True)


def register(app: typer.Typer) -> None:
    """Add ``jurybox schema`` to the CLI."""
    app.add_typer(schema_app, name="schema")
