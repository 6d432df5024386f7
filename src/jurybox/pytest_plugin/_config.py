"""The plugin's settings: command line first, then environment, then ``[tool.jurybox]`` in pyproject.toml."""

from __future__ import annotations

import os
import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from jurybox.core import InputLimitError, read_toml_file
from jurybox.pytest_plugin._seed_env import SeedEnvError, read_seed_knobs

RECORD_MODES = ("none", "once", "new_episodes", "all", "rewrite")
DEFAULT_CONFIDENCE = 0.6
DEFAULT_SIMILARITY = 0.85

TRUE_WORDS = frozenset({"1", "true", "yes", "on"})
FALSE_WORDS = frozenset({"0", "false", "no", "off", ""})


class ConfigError(ValueError):
    """A bad setting; the message names the file (or variable) and the field."""


@dataclass(frozen=True)
class CassetteSettings:
    """``[tool.jurybox.cassettes]``: what redaction replaces and which hosts replay may reach.

    Attributes:
        redact_headers: Extra header names replaced at record time (case-insensitive).
        redact_fields: JSON body field names whose values are replaced at record time.
        allowed_hosts: ``host`` or ``host:port`` entries a test may still connect to while
            replaying in record mode ``none`` (a local database, say); everything else is blocked.
        redact_patterns: Extra regular expressions whose matches are replaced at record time
            and reported by ``jurybox lint-cassettes``.
        redact_pii: Replace phone numbers, card numbers, IBANs and US social security numbers
            at record time; None (the default) means on, in every record mode.
        ignore_empty_fields: Match JSON bodies as if fields whose value is null, ``[]`` or ``{}``
            were absent (a cassette recorded by an older SDK that sent, or left out, such defaults).
        ignore_query_params: Query parameters left out of matching (volatile ones such as
            Anthropic's former ``beta=true``).
    """

    redact_headers: tuple[str, ...] = ()
    redact_fields: tuple[str, ...] = ()
    allowed_hosts: tuple[str, ...] = ()
    redact_patterns: tuple[str, ...] = ()
    redact_pii: bool | None = None
    ignore_empty_fields: bool = False
    ignore_query_params: tuple[str, ...] = ()

    def pii_for(self, record_mode: str) -> bool:
        """Whether PII is redacted when recording in ``record_mode``: always, unless ``redact_pii = false``.

        ``record_mode`` stays in the signature for callers; PII used to be redacted in ``all`` and
        ``rewrite`` only, which left it in every cassette recorded with ``once`` or ``new_episodes``.
        """
        del record_mode
        return self.redact_pii if self.redact_pii is not None else True


@dataclass(frozen=True)
class JuryboxSettings:
    """Everything the pytest plugin reads from its configuration.

    Attributes:
        model: Judge model spec (``openai:gpt-4o-mini``), or None when none is configured.
        model_source: Where ``model`` came from, for messages (``--jurybox-model``, ...).
        base_url: Base URL handed to the judge model's provider.
        confidence: Verdicts under this confidence are uncertain, never passes.
        fail_on_reject: Every soft (``warn_*``) check fails the test like a hard one.
        cache: Judge response cache setting handed to the model (path or bool), if any.
        live: Tests marked ``live_llm`` run (``--jurybox-live``).
        record_mode: Cassette record mode.
        similarity_threshold: Default threshold of ``expect(...).is_similar_to``.
        cassettes: Redaction and replay settings.
        cassette_root: One folder for every cassette (``<root>/<test path>/<test id>.yaml``,
            one tree for all), relative to the rootdir; None keeps them beside each test.
        note: A line for the report header about a setting that is given but has no effect
            (``LLM_JUDGE_MODEL`` without ``LLM_JUDGE=1``), or "".
    """

    model: str | None = None
    model_source: str = ""
    base_url: str | None = None
    confidence: float = DEFAULT_CONFIDENCE
    fail_on_reject: bool = False
    cache: str | bool | None = None
    live: bool = False
    record_mode: str = "none"
    similarity_threshold: float = DEFAULT_SIMILARITY
    cassettes: CassetteSettings = field(default_factory=CassetteSettings)
    cassette_root: str | None = None
    note: str = ""


def parse_bool(value: str, where: str) -> bool:
    """Read an on/off environment value, refusing anything ambiguous."""
    word = value.strip().lower()
    if word in TRUE_WORDS:
        return True
    if word in FALSE_WORDS:
        return False
    raise ConfigError(f"{where}: expected 1/0, true/false, yes/no or on/off, got {value!r}")


def read_pyproject(path: Path) -> Mapping[str, Any]:
    """The ``[tool.jurybox]`` table of a pyproject.toml, or an empty mapping when it has none."""
    try:
        data = read_toml_file(path)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: invalid TOML: {exc}") from exc
    except InputLimitError as exc:
        raise ConfigError(f"{path}: {exc}") from None
    tool = data.get("tool", {})
    table = tool.get("jurybox", {}) if isinstance(tool, Mapping) else {}
    if not isinstance(table, Mapping):
        raise ConfigError(f"{path}: [tool.jurybox] must be a table")
    return table


def _fraction(table: Mapping[str, Any], key: str, where: str, default: float) -> float:
    value = table.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0.0 <= value <= 1.0:
        raise ConfigError(f"{where}: field {key!r} must be a number in 0..1, got {value!r}")
    return float(value)


def _string(table: Mapping[str, Any], key: str, where: str) -> str | None:
    value = table.get(key)
    if value is not None and not isinstance(value, str):
        raise ConfigError(f"{where}: field {key!r} must be a string, got {value!r}")
    return value or None


def _strings(table: Mapping[str, Any], key: str, where: str) -> tuple[str, ...]:
    value = table.get(key, [])
    if not isinstance(value, list) or not all(isinstance(item, str) and item for item in value):
        raise ConfigError(f"{where}: field {key!r} must be a list of non-empty strings, got {value!r}")
    return tuple(value)


def _cassette_settings(table: Mapping[str, Any], where: str) -> CassetteSettings:
    section = table.get("cassettes", {})
    if not isinstance(section, Mapping):
        raise ConfigError(f"{where}: field 'cassettes' must be a table ([tool.jurybox.cassettes])")
    inner = f"{where} [tool.jurybox.cassettes]"
    valid = {
        "redact_headers", "redact_fields", "allowed_hosts", "redact_patterns", "redact_pii",
        "ignore_empty_fields", "ignore_query_params",
    }  # fmt: skip
    unknown = set(section) - valid
    if unknown:
        raise ConfigError(f"{inner}: unknown field(s) {', '.join(sorted(unknown))}; valid: {', '.join(sorted(valid))}")
    patterns = _strings(section, "redact_patterns", inner)
    for pattern in patterns:
        try:
            re.compile(pattern)
        except re.error as exc:
            raise ConfigError(
                f"{inner}: field 'redact_patterns': {pattern!r} is not a regular expression: {exc}"
            ) from exc
    pii = section.get("redact_pii")
    if pii is not None and not isinstance(pii, bool):
        raise ConfigError(f"{inner}: field 'redact_pii' must be true or false, got {pii!r}")
    ignore_empty = section.get("ignore_empty_fields", False)
    if not isinstance(ignore_empty, bool):
        raise ConfigError(f"{inner}: field 'ignore_empty_fields' must be true or false, got {ignore_empty!r}")
    return CassetteSettings(
        redact_headers=_strings(section, "redact_headers", inner),
        redact_fields=_strings(section, "redact_fields", inner),
        allowed_hosts=_strings(section, "allowed_hosts", inner),
        redact_patterns=patterns,
        redact_pii=pii,
        ignore_empty_fields=ignore_empty,
        ignore_query_params=_strings(section, "ignore_query_params", inner),
    )


def build_settings(
    *,
    pyproject: Path | None,
    environ: Mapping[str, str],
    cli_model: str | None = None,
    cli_strict: bool = False,
    cli_live: bool = False,
    cli_record_mode: str | None = None,
) -> JuryboxSettings:
    """Merge the three sources; the command line wins over the environment, which wins over pyproject.

    Spector's variables (``LLM_JUDGE_MODEL``, ``OLLAMA_LIVE``...; see ``_seed_env``) fill in a knob
    only where none of jurybox's own settings for it is given.

    Args:
        pyproject: The project's pyproject.toml, when there is one.
        environ: The environment (``os.environ`` in the plugin).
        cli_model: ``--jurybox-model``.
        cli_strict: ``--jurybox-strict``.
        cli_live: ``--jurybox-live``.
        cli_record_mode: ``--record-mode``.

    Raises:
        ConfigError: naming the file or variable and the field at fault.
    """
    table: Mapping[str, Any] = {}
    where = "pyproject.toml"
    if pyproject is not None and pyproject.is_file():
        table = read_pyproject(pyproject)
        where = str(pyproject)

    try:
        seed = read_seed_knobs(environ, parse_bool=parse_bool)
    except SeedEnvError as exc:
        raise ConfigError(str(exc)) from None
    model, source = _string(table, "model", where), f"[tool.jurybox] model in {where}"
    if model is None and seed.model is not None:  # Spector's names fill in what ours leave unset
        model, source = seed.model, "LLM_JUDGE_MODEL"
    if environ.get("JURYBOX_JUDGE_MODEL"):
        model, source = environ["JURYBOX_JUDGE_MODEL"], "JURYBOX_JUDGE_MODEL"
    if cli_model:
        model, source = cli_model, "--jurybox-model"

    fail_on_reject = table.get("fail_on_reject", False)
    if not isinstance(fail_on_reject, bool):
        raise ConfigError(f"{where}: field 'fail_on_reject' must be true or false, got {fail_on_reject!r}")
    if "fail_on_reject" not in table and seed.fail_on_reject is not None:
        fail_on_reject = seed.fail_on_reject
    if "JURYBOX_FAIL_ON_REJECT" in environ:
        fail_on_reject = parse_bool(environ["JURYBOX_FAIL_ON_REJECT"], "JURYBOX_FAIL_ON_REJECT")
    fail_on_reject = fail_on_reject or cli_strict

    cache = table.get("cache")
    if cache is not None and not isinstance(cache, str | bool):
        raise ConfigError(f"{where}: field 'cache' must be a path or true/false, got {cache!r}")

    record_mode = cli_record_mode or "none"
    if record_mode not in RECORD_MODES:
        raise ConfigError(f"--record-mode: expected one of {', '.join(RECORD_MODES)}, got {record_mode!r}")

    return JuryboxSettings(
        model=model,
        model_source=source if model else "",
        base_url=_string(table, "base_url", where),
        confidence=_fraction(table, "confidence", where, _or(seed.confidence, DEFAULT_CONFIDENCE)),
        fail_on_reject=fail_on_reject,
        cache=cache,
        live=cli_live or bool(seed.live),
        record_mode=record_mode,
        similarity_threshold=_fraction(table, "similarity_threshold", where, DEFAULT_SIMILARITY),
        cassettes=_cassette_settings(table, where),
        cassette_root=_string(table, "cassette_root", where),
        note=_ignored_seed_model(seed.ignored_model, model),
    )


def _ignored_seed_model(ignored: str | None, model: str | None) -> str:
    """Say why a judge model named by ``LLM_JUDGE_MODEL`` is not the one in use."""
    if ignored is None or model is not None:
        return ""
    return f"LLM_JUDGE_MODEL={ignored} is not used: the LLM judge is off until LLM_JUDGE=1"


def _or(value: float | None, default: float) -> float:
    return default if value is None else value


def environment() -> Mapping[str, str]:
    """The process environment (a function so tests can see where it is read)."""
    return os.environ
