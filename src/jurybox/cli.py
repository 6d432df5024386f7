"""The ``jurybox`` command. Each feature adds its sub-commands from its own module."""

from __future__ import annotations

import typer

from jurybox import __version__
from jurybox._cli import (
    cache,
    calibrate,
    check,
    experiment,
    history,
    judges,
    lessons,
    lint,
    people,
    plugins,
    reports,
    run,
    schema,
    serve,
)
from jurybox._cli.help_format import hide_flag_types, short_usage_errors

app = typer.Typer(
    name="jurybox",
    help="Test LLM apps and agents by meaning: judges, suites, cassettes, run history.",
    no_args_is_help=True,
    add_completion=False,
)

hide_flag_types()  # no `<bool>` after flags in --help
short_usage_errors()  # a mistake on the command line is one line, not a box

# One line per feature module; each module owns its commands.
for register in (
    check.register,
    lint.register,
    history.register,
    lessons.register,
    reports.register,
    experiment.register,
    run.register,
    cache.register,
    judges.register,
    plugins.register,
    schema.register,
    serve.register,
    calibrate.register,
    people.register,
):
    register(app)


@app.command()
def version() -> None:
    """Print the jurybox version."""
    typer.echo(__version__)


def main() -> None:
    app()


if __name__ == "__main__":  # python -m jurybox.cli
    main()
