"""``jurybox lint-cassettes PATH...``: fail when a cassette still holds a secret (for pre-commit and CI)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from jurybox.core import ExtraMissingError, require
from jurybox.pytest_plugin import ConfigError, RuleSet, build_settings


def lint_cassettes(
    paths: Annotated[list[Path], typer.Argument(help="Cassette files or folders (searched for *.yaml, *.yml).")],
    ignore: Annotated[
        list[str] | None,
        typer.Option("--ignore", help="A kind to skip (repeatable), e.g. --ignore email, --ignore phone-number."),
    ] = None,
) -> None:
    """Scan cassettes for secrets left after redaction; exit 1 naming file, line and kind for each.

    Reads each cassette as data, with the detector record-time redaction uses: values under
    credential-like names in any spelling (headers, query parameters, JSON and form fields at any
    depth, cookies, XML tags, name=value lines in text), URL userinfo and token-like URL parts,
    random-looking tokens, detect-secrets' vendor formats and the LLM providers' keys, e-mail
    addresses and personal data (phone numbers, Luhn-checked card numbers, IBANs, US SSNs), inside
    JSON strings, streams, forms and base64/gzip bodies too, plus the redact_fields/redact_patterns
    of [tool.jurybox.cassettes] in ./pyproject.toml. Exit 0: clean; 1: secrets found; 2: bad input.
    """
    from jurybox.pytest_plugin import cassette_files, lint_file

    try:  # the vendor-key and phone-number checks come with the cassettes extra
        for module, package in (("detect_secrets", "detect-secrets"), ("phonenumbers", "phonenumbers")):
            require(module, extra="cassettes", feature="jurybox lint-cassettes", package=package)
    except ExtraMissingError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None
    try:
        cassettes = build_settings(pyproject=Path("pyproject.toml"), environ={}).cassettes
    except ConfigError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from exc
    rules = RuleSet.build(cassettes.redact_headers, cassettes.redact_fields, cassettes.redact_patterns, pii=True)
    skipped = frozenset(ignore or ())
    known = set(rules.names)
    unknown = skipped - known
    if unknown:
        names = ", ".join(sorted(known))
        typer.echo(f"error: unknown pattern(s) {', '.join(sorted(unknown))}; known: {names}", err=True)
        raise typer.Exit(2)
    try:
        files = list(cassette_files(paths))
    except FileNotFoundError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from exc
    # The findings and the verdict line are the result: stdout (pipe it, grep it); problems go to stderr.
    total = 0
    bad_files = 0
    unreadable = 0
    for path in files:
        try:
            findings = lint_file(path, skipped, rules)
        except (ValueError, OSError) as exc:
            typer.echo(f"error: {exc}", err=True)
            unreadable += 1
            continue
        for finding in findings:
            typer.echo(str(finding))
        total += len(findings)
        bad_files += bool(findings)
    unread = f"; {unreadable} could not be read" if unreadable else ""
    if total:
        typer.echo(f"{total} secret(s) in {bad_files} of {len(files)} cassette file(s){unread}")
        raise typer.Exit(1)
    if unreadable:
        typer.echo(f"no secrets found in {len(files) - unreadable} of {len(files)} cassette file(s){unread}")
        raise typer.Exit(2)
    typer.echo(f"no secrets found in {len(files)} cassette file(s)")


def register(app: typer.Typer) -> None:
    app.command("lint-cassettes")(lint_cassettes)
