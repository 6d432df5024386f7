"""Settings: command line over environment over pyproject, and errors that name the file and field."""

from __future__ import annotations

from pathlib import Path

import pytest

from jurybox.pytest_plugin import CassetteSettings, ConfigError, build_settings


def pyproject(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "pyproject.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_defaults_without_any_configuration() -> None:
    settings = build_settings(pyproject=None, environ={})
    assert settings.model is None and settings.record_mode == "none"
    assert settings.confidence == 0.6 and settings.similarity_threshold == 0.85 and not settings.fail_on_reject
    assert settings.cassettes == CassetteSettings()


def test_command_line_beats_environment_beats_pyproject(tmp_path: Path) -> None:
    path = pyproject(tmp_path, '[tool.jurybox]\nmodel = "ollama:llama3.1"\nfail_on_reject = true\n')
    from_file = build_settings(pyproject=path, environ={})
    assert (from_file.model, from_file.fail_on_reject) == ("ollama:llama3.1", True)
    assert from_file.model_source == f"[tool.jurybox] model in {path}"
    from_env = build_settings(
        pyproject=path, environ={"JURYBOX_JUDGE_MODEL": "anthropic:claude-haiku-4-5", "JURYBOX_FAIL_ON_REJECT": "0"}
    )
    assert (from_env.model, from_env.model_source, from_env.fail_on_reject) == (
        "anthropic:claude-haiku-4-5",
        "JURYBOX_JUDGE_MODEL",
        False,
    )
    from_cli = build_settings(
        pyproject=path, environ={"JURYBOX_JUDGE_MODEL": "x:y"}, cli_model="openai:gpt-4o-mini", cli_strict=True
    )
    assert (from_cli.model, from_cli.model_source, from_cli.fail_on_reject) == (
        "openai:gpt-4o-mini",
        "--jurybox-model",
        True,
    )


def test_cassette_settings_are_read(tmp_path: Path) -> None:
    path = pyproject(
        tmp_path,
        '[tool.jurybox.cassettes]\nredact_headers = ["X-Tenant"]\nredact_fields = ["user_id"]\n'
        'allowed_hosts = ["127.0.0.1:5432"]\n',
    )
    assert build_settings(pyproject=path, environ={}).cassettes == CassetteSettings(
        ("X-Tenant",), ("user_id",), ("127.0.0.1:5432",)
    )


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[tool.jurybox]\nconfidence = 1.5\n", "field 'confidence' must be a number in 0..1, got 1.5"),
        ("[tool.jurybox]\nmodel = 3\n", "field 'model' must be a string, got 3"),
        ("[tool.jurybox]\nfail_on_reject = 'yes'\n", "field 'fail_on_reject' must be true or false"),
        ("[tool.jurybox.cassettes]\nredact_header = ['x']\n", "unknown field(s) redact_header"),
        ("[tool.jurybox.cassettes]\nredact_fields = 'user_id'\n", "field 'redact_fields' must be a list"),
        ("[tool.jurybox\n", "invalid TOML"),
    ],
)
def test_bad_pyproject_values_name_file_and_field(tmp_path: Path, text: str, message: str) -> None:
    path = pyproject(tmp_path, text)
    with pytest.raises(ConfigError) as error:
        build_settings(pyproject=path, environ={})
    assert str(path) in str(error.value) and message in str(error.value)


def test_ambiguous_environment_switch_is_refused() -> None:
    with pytest.raises(ConfigError, match="JURYBOX_FAIL_ON_REJECT: expected 1/0"):
        build_settings(pyproject=None, environ={"JURYBOX_FAIL_ON_REJECT": "maybe"})


def test_unknown_record_mode_is_refused() -> None:
    with pytest.raises(ConfigError, match="--record-mode: expected one of none, once"):
        build_settings(pyproject=None, environ={}, cli_record_mode="sometimes")
