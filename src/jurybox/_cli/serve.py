"""``jurybox serve``: the web dashboard on a store (needs ``pip install 'jurybox[web]'``)."""

from __future__ import annotations

import errno
import ipaddress
import socket
from typing import Annotated

import typer
from rich.console import Console
from rich.markup import escape

from jurybox._cli.common import StoreOption
from jurybox._cli.serve_otlp import (
    OtlpFlag,
    OtlpJudgesOption,
    OtlpRouteOption,
    OtlpSuiteOption,
    SampleAttributeOption,
    SampleRateOption,
    SampleRootOption,
    SampleServiceOption,
    check_stored_suites,
    otlp_settings,
)

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8484
"""Not 8765, which the docs' stub model servers use (``python -m jurybox.stubs openai --port 8765``)."""
EXIT_CANNOT_SERVE = 2
"""The dashboard cannot start: the web extra is missing, the address is taken, or it may not serve writes there."""
INSTALL_HINT = "pip install 'jurybox[web]'"


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def serve(
    store_url: StoreOption = None,
    host: Annotated[str, typer.Option(help="Address to listen on. Keep the default to serve only this machine.")] = (
        DEFAULT_HOST
    ),
    port: Annotated[int, typer.Option(help="Port to listen on (0: any free one).", min=0, max=65535)] = DEFAULT_PORT,
    refresh: Annotated[int, typer.Option(help="Seconds between refreshes of a running run's page.", min=1)] = 5,
    otlp: OtlpFlag = False,
    otlp_judges: OtlpJudgesOption = None,
    otlp_suite: OtlpSuiteOption = None,
    otlp_route: OtlpRouteOption = None,
    sample_rate: SampleRateOption = 1.0,
    sample_service: SampleServiceOption = None,
    sample_root: SampleRootOption = None,
    sample_attribute: SampleAttributeOption = None,
    trace_url: Annotated[
        str | None,
        typer.Option(
            "--trace-url",
            help="Where your trace viewer shows a trace, e.g. http://phoenix:6006/projects/default/traces/{trace_id}: "
            "a judgment of a production trace links there.",
        ),
    ] = None,
    read_login: Annotated[
        bool | None,
        typer.Option(
            "--read-login/--no-read-login",
            help="Every page and the API need a login, not only writes. Default: on when --host is not "
            "this machine (the store holds prompts, replies, and reviewers' names and notes).",
        ),
    ] = None,
) -> None:
    """Serve the dashboard: runs, cases with every judgment, compare, trends, lessons and reviews."""
    console = Console(stderr=True, highlight=False)
    try:
        import uvicorn

        from jurybox.web import WebSettings, create_app
    except ImportError as exc:
        missing = escape(str(exc))
        console.print(
            f"[red]error:[/] the dashboard needs the web extra ({missing}). Install it with: {escape(INSTALL_HINT)}",
            soft_wrap=True,
        )
        raise typer.Exit(EXIT_CANNOT_SERVE) from None
    online = (
        otlp_settings(otlp_judges, otlp_suite, sample_rate, sample_service, sample_root, sample_attribute, otlp_route)
        if otlp
        else None
    )
    guarded = read_login if read_login is not None else not _is_loopback(host)
    try:
        web_settings = WebSettings(
            refresh_seconds=refresh,
            read_login=guarded,
            trace_url=trace_url,
            compile_templates=True,
            freeze_startup=True,
        )
    except ValueError as exc:
        console.print(f"[red]error:[/] --trace-url: {escape(str(exc))}", soft_wrap=True)
        raise typer.Exit(EXIT_CANNOT_SERVE) from None
    app = create_app(store_url, settings=web_settings, otlp=online)
    if online is not None:
        check_stored_suites(app)
    if not _is_loopback(host):
        # Writes need a login; with no user at all, nothing could protect them on a shared address.
        users, unreadable = 0, ""
        try:
            users = app.state.jurybox.access.store().users.user_count()
        except Exception as exc:  # no store yet, or one that cannot be read: no user can log in either
            unreadable = f" (the store cannot be read: {exc})"
        if users == 0:
            console.print(
                f"[red]error:[/] serving on {escape(host)} needs at least one user, so that writes need a login: "
                f"jurybox web add-user NAME --role admin (or serve on 127.0.0.1){escape(unreadable)}.",
                soft_wrap=True,
            )
            raise typer.Exit(EXIT_CANNOT_SERVE)
        if not guarded:  # asked for: a store holds prompts, replies and reasoning, so say who can now read them
            console.print(
                f"[yellow]warning:[/] serving on {escape(host)} with --no-read-login: anyone who can reach this "
                "address can read the store; writes need a login.",
                soft_wrap=True,
            )
    if guarded:
        console.print("Every page needs a login (--read-login): jurybox web add-user NAME prints a token.")
    try:  # bound here, so a taken port is one line, and the URL printed is one that answers
        listening = bind(host, port)
    except OSError as exc:
        console.print(f"[red]error:[/] {escape(bind_problem(host, port, exc))}", soft_wrap=True)
        raise typer.Exit(EXIT_CANNOT_SERVE) from None
    shown = f"[{host}]" if ":" in host else host
    where = escape(app.state.jurybox.access.shown_url)
    bound = listening.getsockname()[1]
    console.print(f"jurybox dashboard on {where}: http://{escape(shown)}:{bound}/  (Ctrl-C stops it)", soft_wrap=True)
    if online is not None:
        console.print(
            f"online evaluation: OTLP/HTTP traces at http://{escape(shown)}:{bound}/v1/traces", soft_wrap=True
        )
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", server_header=False))
    server.run(sockets=[listening])


def bind(host: str, port: int) -> socket.socket:
    """A listening socket on ``host:port`` (port 0: a free one), as uvicorn would open it.

    Raises:
        OSError: the address is in use, or cannot be assigned on this machine.
    """
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    listening = socket.socket(family, socket.SOCK_STREAM)
    try:
        listening.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listening.bind((host, port))
        listening.listen(2048)
    except OSError:
        listening.close()
        raise
    listening.set_inheritable(True)
    return listening


def bind_problem(host: str, port: int, error: OSError) -> str:
    """One line for an address the dashboard cannot listen on, with what to do."""
    if error.errno == errno.EADDRINUSE:
        return (
            f"port {port} on {host} is already in use (another jurybox serve?): "
            f"choose another with --port, e.g. --port {port + 1}, or --port 0 for any free one"
        )
    return f"cannot listen on {host}:{port}: {error.strerror or error}"


def register(app: typer.Typer) -> None:
    """Add ``jurybox serve`` to the ``jurybox`` app."""
    app.command()(serve)
