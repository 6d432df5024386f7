"""The ``jurybox`` command. Each feature adds its sub-commands from its own module."""

from __future__ import annotations

import typer

from jurybox import __version__
from jurybox._cli import cache, calibrate, check, history, judges, lint, run, serve

app = typer.Typer(
    name="jurybox",
    help="Test LLM apps and agents by meaning: judges, suites, cassettes, run history.",
    no_args_is_help=True,
    add_completion=False,
)

# One line per feature module; each module owns its commands.
for register in (
    check.register,
    lint.register,
    history.register,
    run.register,
    cache.register,
    judges.register,
    serve.register,
    calibrate.register,
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
