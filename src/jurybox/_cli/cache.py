"""``jurybox cache explain | clear | stats``: look inside the judge response cache."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.markup import escape

from jurybox.core import read_json
from jurybox.models import (
    CACHE_URL_ENV,
    CacheBackend,
    ChatMessage,
    GenerateRequest,
    ModelConfigError,
    ModelSpec,
    cache_key,
    get_model,
    open_cache,
    provider_info,
)

cache_app = typer.Typer(
    name="cache",
    help="The judge response cache (.jurybox/cache): what a key is made of, statistics, clearing.",
    no_args_is_help=True,
)

PathOption = Annotated[
    str | None,
    typer.Option(
        "--path",
        "--cache",
        help="The cache: a SQLite file, or a redis://host:6379/0 or postgresql://user@host/db URL "
        f"(default: ${CACHE_URL_ENV}, else $JURYBOX_CACHE_DIR or .jurybox/cache/responses.sqlite3).",
    ),
]


@contextmanager
def _cache(location: str | None) -> Iterator[CacheBackend]:
    """The cache at ``location``; an unreachable server or missing client is a one-line error (exit 2)."""
    try:
        cache = open_cache(location)
        yield cache
    except ModelConfigError as error:
        Console(stderr=True).print(f"[red]error:[/] {escape(str(error))}", highlight=False)
        raise typer.Exit(2) from None
    cache.close()


def _schema(path: Path | None) -> dict[str, Any] | None:
    if path is None:
        return None
    try:
        value = read_json(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise typer.BadParameter(f"{path}: cannot read a JSON schema ({error})") from error
    if not isinstance(value, dict):
        raise typer.BadParameter(f"{path}: a JSON schema must be an object")
    return value


@cache_app.command()
def explain(
    spec: Annotated[str | None, typer.Argument(help="The judge model, e.g. openai:gpt-4o-mini.")] = None,
    prompt: Annotated[str | None, typer.Argument(help="The user message.")] = None,
    system: Annotated[str | None, typer.Option(help="A system message sent before the prompt.")] = None,
    temperature: Annotated[float, typer.Option(help="Sampling temperature.")] = 0.0,
    max_tokens: Annotated[int | None, typer.Option(help="Reply token limit.")] = None,
    seed: Annotated[int | None, typer.Option(help="Sampling seed.")] = None,
    schema: Annotated[Path | None, typer.Option(help="A JSON schema file for structured output.")] = None,
    base_url: Annotated[str | None, typer.Option(help="The server URL (default: the provider's).")] = None,
    key: Annotated[str | None, typer.Option(help="Show what a stored key was made of instead.")] = None,
    path: PathOption = None,
) -> None:
    """Print what goes into a cache key (and the key), or what a stored key was made of."""
    console = Console()
    if key is not None:
        with _cache(path) as cache:
            material = cache.material(key) if cache.exists() else None
            if material is None:
                console.print(f"no entry {escape(key)} in {escape(cache.location)}")
                raise typer.Exit(1)
        typer.echo(json.dumps(material, indent=2, ensure_ascii=False, sort_keys=True))
        return
    if spec is None or prompt is None:
        raise typer.BadParameter("give a model spec and a prompt (or --key HASH)")
    try:
        parsed = ModelSpec.parse(spec)
        # The API key is not part of the key, so explaining needs none.
        keyless = provider_info(parsed.provider).key_variable is None  # ollama, say: it takes no api_key
        credentials = {} if keyless else {"api_key": "not-needed-to-explain"}
        model = get_model(parsed, base_url=base_url, **credentials)
    except ModelConfigError as error:
        raise typer.BadParameter(str(error)) from error
    messages = [ChatMessage("system", system)] if system else []
    messages.append(ChatMessage("user", prompt))
    request = GenerateRequest(tuple(messages), temperature, max_tokens, _schema(schema), seed)
    material = model.cache_key_material(request)
    digest = cache_key(material)
    typer.echo(json.dumps(material, indent=2, ensure_ascii=False, sort_keys=True))
    typer.echo(f"key: sha256:{digest}")
    cached = "yes" if request.temperature == 0 or model.cache_setting is True else "no (temperature > 0)"
    typer.echo(f"cached by default: {cached}")
    with _cache(path) as cache:
        stored = cache.exists() and cache.material(digest) is not None
        typer.echo(f"stored in {cache.location}: {'yes' if stored else 'no'}")


@cache_app.command()
def clear(path: PathOption = None) -> None:
    """Delete every cached response."""
    with _cache(path) as cache:
        if not cache.exists():
            typer.echo(f"nothing to clear: {cache.location} does not exist")
            return
        removed = cache.clear()
        typer.echo(f"removed {removed} cached response{'s' if removed != 1 else ''} from {cache.location}")


@cache_app.command()
def stats(path: PathOption = None) -> None:
    """How many responses are cached, per model, and their size."""
    with _cache(path) as cache:
        if not cache.exists():
            typer.echo(f"{cache.location}: no cache yet")
            return
        info = cache.stats()
    typer.echo(f"{info.path}: {info.entries} responses, {info.size_bytes / 1024:.1f} KiB")
    for model, count in sorted(info.by_model.items()):
        typer.echo(f"  {model}: {count}")


def register(app: typer.Typer) -> None:
    app.add_typer(cache_app, name="cache")
