"""``jurybox web add-user | users | disable-user`` and ``jurybox reviews queue | export``.

Users write through the dashboard (cases, runs, reviews); reading may stay open
on 127.0.0.1. A token is printed once, when the user is added: the store keeps
only its hash, so a lost token is replaced by disabling the user and adding one.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape
from rich.table import Table

from jurybox._cli.common import StoreOption, console, opened_store
from jurybox.store import ALL_ROLES

web_app = typer.Typer(
    help="Dashboard users: who may write cases, start runs and review judgments.", no_args_is_help=True
)
reviews_app = typer.Typer(help="People's reviews of judgments: the queue and the labelled set.", no_args_is_help=True)


@web_app.command("add-user")
def add_user(
    name: Annotated[str, typer.Argument(help="Login name (letters, digits, . _ - @).")],
    role: Annotated[
        str,
        typer.Option(
            help="viewer (reads), editor (writes cases, runs, reviews), admin (may change agents), "
            "ingest (sends production traces to POST /v1/traces, nothing else)."
        ),
    ] = "editor",
    store_url: StoreOption = None,
) -> None:
    """Add a dashboard user and print their login token (shown this once)."""
    if role not in ALL_ROLES:
        console().print(f"[bold red]error:[/] --role must be one of {', '.join(ALL_ROLES)} (got {escape(role)!r})")
        raise typer.Exit(2)
    with opened_store(store_url, writes=True) as store:
        try:
            token = store.users.add_user(name, role)
        except ValueError as exc:
            console().print(f"[bold red]error:[/] {escape(str(exc))}")
            raise typer.Exit(2) from None
    out = console()
    out.print(f"Added {escape(name)} ({role}). Their login token, shown once (the store keeps only its hash):")
    out.print(token, markup=False, soft_wrap=True)


@web_app.command("users")
def list_users(store_url: StoreOption = None) -> None:
    """List dashboard users and their roles."""
    with opened_store(store_url) as store:
        users = store.users.users()
    if not users:
        console().print("No users yet: `jurybox web add-user NAME` adds one.")
        return
    table = Table("user", "role", "status", "added")
    for user in users:
        added = f"{user.created_at:%Y-%m-%d %H:%M}" if user.created_at else "-"
        table.add_row(escape(user.name), user.role, "disabled" if user.disabled else "active", added)
    console().print(table)


@web_app.command("disable-user")
def disable_user(
    name: Annotated[str, typer.Argument(help="The user to disable.")],
    store_url: StoreOption = None,
) -> None:
    """Stop a user logging in and end their sessions (their edits and reviews stay)."""
    with opened_store(store_url, writes=True) as store:
        store.users.disable_user(name, actor="jurybox web disable-user")
    console().print(f"Disabled {escape(name)}.")


@reviews_app.command("queue")
def queue(
    run: Annotated[str | None, typer.Option(help="Only this run's judgments.")] = None,
    sample: Annotated[bool, typer.Option("--sample", help="A random sample of passes instead.")] = False,
    seed: Annotated[int, typer.Option(help="The sample's seed.")] = 0,
    limit: Annotated[int, typer.Option(min=1, max=10_000)] = 20,
    store_url: StoreOption = None,
) -> None:
    """Judgments nobody reviewed yet: failed, errored and abstained first, then the least confident."""
    with opened_store(store_url) as store:
        items = store.reviews.review_queue(
            run_id=run, order="sample" if sample else "attention", limit=limit, seed=seed
        )
    if not items:
        console().print("Nothing to review.")
        return
    out = console()
    for item in items:
        confidence = f" confidence {item.confidence:.2f}" if item.confidence is not None else ""
        out.print(f"{item.status.upper():8} {escape(item.case)} :: {escape(item.path)}{confidence}")
        out.print(f"         run {item.run_id}: {escape(item.reasoning.splitlines()[0] if item.reasoning else '')}")


@reviews_app.command("export")
def export(
    output: Annotated[Path, typer.Option("-o", "--output", help="JSONL file to write.")],
    run: Annotated[str | None, typer.Option(help="Only this run's reviews.")] = None,
    judge_key: Annotated[str | None, typer.Option(help="Only reviews of the judge with this identity key.")] = None,
    store_url: StoreOption = None,
) -> None:
    """Write the reviews as a labelled set (JSONL) that `jurybox calibrate` reads."""
    count = 0
    with opened_store(store_url) as store, output.open("w", encoding="utf-8") as handle:
        for row in store.reviews.labelled_rows(run_id=run, judge_key=judge_key):
            handle.write(json.dumps(row, ensure_ascii=False) + "\n")
            count += 1
    console().print(
        f"Wrote {count} reviewed judgment(s) to {escape(str(output))}: jurybox calibrate {output} --judge ..."
    )


def register(app: typer.Typer) -> None:
    """Add ``jurybox web`` and ``jurybox reviews``."""
    app.add_typer(web_app, name="web")
    app.add_typer(reviews_app, name="reviews")
