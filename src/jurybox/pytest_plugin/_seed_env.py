"""Spector's environment variables, read as fallbacks for jurybox's own settings.

| Spector | jurybox | meaning |
| --- | --- | --- |
| ``OLLAMA_LIVE=1`` | ``--jurybox-live`` | run tests marked ``live_llm`` |
| ``LLM_JUDGE=1`` / ``0`` | a judge model is configured / not | the LLM judge on or off (off by default) |
| ``LLM_JUDGE_MODEL`` | ``JURYBOX_JUDGE_MODEL`` | the judge model once ``LLM_JUDGE=1`` (default llama3.1) |
| ``LLM_JUDGE_URL`` | ``ollama:MODEL@URL`` | the Ollama server of ``LLM_JUDGE_MODEL`` |
| ``LLM_JUDGE_CONFIDENCE`` | ``[tool.jurybox] confidence`` | verdicts under it are uncertain (default 0.6) |
| ``LLM_JUDGE_FAIL_ON_REJECT=1`` | ``JURYBOX_FAIL_ON_REJECT=1`` | soft checks fail the test |

jurybox's own setting for a knob wins whenever it is given (command line, ``JURYBOX_*``
variable or ``[tool.jurybox]`` key); Spector's variable fills in only what is left unset.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

#: The judge model ``LLM_JUDGE=1`` uses when ``LLM_JUDGE_MODEL`` is not set: Spector's own default.
DEFAULT_SEED_MODEL = "llama3.1"

#: Spector's variables, in the order the docs list them.
SEED_VARIABLES = (
    "OLLAMA_LIVE",
    "LLM_JUDGE",
    "LLM_JUDGE_MODEL",
    "LLM_JUDGE_URL",
    "LLM_JUDGE_CONFIDENCE",
    "LLM_JUDGE_FAIL_ON_REJECT",
)


@dataclass(frozen=True)
class SeedKnobs:
    """What Spector's variables ask for; None where a variable is unset.

    Attributes:
        enabled: ``LLM_JUDGE`` (on, off, or unset).
        model: The judge model spec ``LLM_JUDGE_MODEL``/``LLM_JUDGE_URL`` name (``llama3.1`` when unset), only
            when ``LLM_JUDGE=1``: as in Spector, the model alone does not turn judging on.
        ignored_model: ``LLM_JUDGE_MODEL`` when it was set but ``LLM_JUDGE`` was not on (it is then unused).
        confidence: ``LLM_JUDGE_CONFIDENCE``.
        fail_on_reject: ``LLM_JUDGE_FAIL_ON_REJECT``.
        live: ``OLLAMA_LIVE``.
    """

    enabled: bool | None = None
    model: str | None = None
    ignored_model: str | None = None
    confidence: float | None = None
    fail_on_reject: bool | None = None
    live: bool | None = None


class SeedEnvError(ValueError):
    """A Spector variable holds a value that cannot be read; the message names it."""


ParseBool = Callable[[str, str], bool]
"""The plugin's on/off reader: ``parse_bool(value, variable_name)``."""


def read_seed_knobs(environ: Mapping[str, str], *, parse_bool: ParseBool) -> SeedKnobs:
    """Read Spector's variables.

    Args:
        environ: The environment.
        parse_bool: The plugin's on/off reader (it names the variable on a bad value).

    Raises:
        SeedEnvError: a value that is not a number, a model spec, or on/off.
    """

    def flag(name: str) -> bool | None:
        return parse_bool(environ[name], name) if environ.get(name, "").strip() else None

    enabled = flag("LLM_JUDGE")
    named = environ.get("LLM_JUDGE_MODEL", "").strip()
    model = None
    if enabled:
        model = _model_spec(named or DEFAULT_SEED_MODEL, environ.get("LLM_JUDGE_URL", "").strip())
    confidence = None
    if environ.get("LLM_JUDGE_CONFIDENCE", "").strip():
        confidence = _fraction(environ["LLM_JUDGE_CONFIDENCE"])
    return SeedKnobs(
        enabled=enabled,
        model=model,
        ignored_model=named if named and not enabled else None,
        confidence=confidence,
        fail_on_reject=flag("LLM_JUDGE_FAIL_ON_REJECT"),
        live=flag("OLLAMA_LIVE"),
    )


def _model_spec(name: str, url: str) -> str | None:
    if not name:
        return None
    # Imported here: the plugin loads in every pytest run and keeps the model stack out of it.
    from jurybox.models import ModelConfigError, ModelSpec

    try:
        spec = ModelSpec.parse(name)
    except ModelConfigError:
        # The seed runs its judge on Ollama: a bare name ("llama3.1", "qwen2.5:7b") is an Ollama model.
        spec = ModelSpec("ollama", name)
    if url:
        try:
            spec = ModelSpec(spec.provider, spec.model, url)
        except ModelConfigError as exc:
            raise SeedEnvError(f"LLM_JUDGE_URL: {exc}") from None
    return str(spec)


def _fraction(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not 0.0 <= value <= 1.0:
        raise SeedEnvError(f"LLM_JUDGE_CONFIDENCE: expected a number in 0..1, got {text!r}")
    return value
