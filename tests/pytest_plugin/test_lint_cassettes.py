"""``jurybox lint-cassettes`` names file, line and pattern for every secret left, and exits non-zero."""

from __future__ import annotations

import base64
import gzip
import shutil
from pathlib import Path

import typer
from typer.testing import CliRunner

from jurybox._cli import lint

# The command on its own app (importing the whole jurybox CLI would load every feature).
app = typer.Typer()
app.callback()(lambda: None)
lint.register(app)

DATA = Path(__file__).resolve().parents[1] / "data" / "cassettes" / "pytest_plugin"

CLEAN = """\
interactions:
- request:
    body: '{"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "hi"}]}'
    headers:
      authorization:
      - <REDACTED>
      content-type:
      - application/json
    method: POST
    uri: https://api.openai.com/v1/chat/completions
  response:
    body:
      string: '{"choices": [{"message": {"role": "assistant", "content": "hello"}}]}'
    headers:
      set-cookie:
      - <REDACTED>
    status:
      code: 200
      message: OK
version: 1
"""


def run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, ["lint-cassettes", *args])
    return result.exit_code, result.output


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_clean_cassette_passes(tmp_path: Path) -> None:
    write(tmp_path, "clean.yaml", CLEAN)
    code, output = run(str(tmp_path))
    assert code == 0, output
    assert "no secrets found in 1 cassette file(s)" in output


def test_secret_written_by_hand_is_caught_with_file_line_and_pattern(tmp_path: Path) -> None:
    key = "sk-proj-" + "Q" * 40
    text = CLEAN.replace('"content": "hello"', f'"content": "use {key}"').replace(
        "      - <REDACTED>\n      content-type", "      - Bearer abcdefghijklmnop\n      content-type"
    )
    path = write(tmp_path, "leaky.yaml", text)
    code, output = run(str(path))
    assert code == 1
    assert f"{path}:13: openai-key: sk-pro…QQ" in output
    assert f"{path}:6: bearer-token:" in output
    assert f"{path}:6: header authorization:" in output
    assert key not in output  # the report masks what it found


def test_unredacted_credential_header_and_email_are_caught(tmp_path: Path) -> None:
    text = CLEAN.replace("      set-cookie:\n      - <REDACTED>", "      set-cookie:\n      - sid=abc123; Path=/")
    text = text.replace('"content": "hi"', '"content": "mail bob@example.org"')
    path = write(tmp_path, "cookie.yaml", text)
    code, output = run(str(path))
    assert code == 1
    assert f"{path}:16: header set-cookie:" in output
    assert f"{path}:3: email:" in output
    code, output = run("--ignore", "email", "--ignore", "header", str(path))
    assert code == 0, output


def test_secret_inside_a_gzip_binary_body_is_caught(tmp_path: Path) -> None:
    blob = base64.b64encode(gzip.compress(b'{"token": "AKIAIOSFODNN7EXAMPLE"}')).decode()
    text = CLEAN.replace(
        '      string: \'{"choices": [{"message": {"role": "assistant", "content": "hello"}}]}\'',
        f"      string: !!binary |\n        {blob}",
    )
    path = write(tmp_path, "gzip.yaml", text)
    code, output = run(str(path))
    assert code == 1
    assert f"{path}:13: aws-access-key (in binary body):" in output


def test_real_third_party_cassette_cookies_are_reported(tmp_path: Path) -> None:
    # Recorded by another project without cookie redaction: exactly what the lint exists for.
    shutil.copyfile(DATA / "openllmetry__test_chat_tools_streaming__sse.yaml", tmp_path / "real.yaml")
    code, output = run(str(tmp_path))
    assert code == 1
    assert "real.yaml:85: header set-cookie:" in output


def test_missing_path_and_invalid_yaml_are_usage_errors(tmp_path: Path) -> None:
    code, output = run(str(tmp_path / "nope"))
    assert code == 2
    assert "no such file or folder" in output
    write(tmp_path, "broken.yaml", "interactions:\n  - request: [unclosed\n")
    code, output = run(str(tmp_path / "broken.yaml"))
    assert code == 2
    assert "broken.yaml:3: not valid YAML" in output


def test_the_result_goes_to_stdout_and_problems_to_stderr(tmp_path: Path) -> None:
    """`jurybox lint-cassettes cassettes > lint.txt` keeps the verdict; a broken file is a diagnostic."""
    write(tmp_path, "clean.yaml", CLEAN)
    clean = CliRunner().invoke(app, ["lint-cassettes", str(tmp_path)])
    assert (clean.exit_code, clean.stdout, clean.stderr) == (0, "no secrets found in 1 cassette file(s)\n", "")

    write(tmp_path, "leaky.yaml", CLEAN.replace('"content": "hello"', '"content": "mail bob@example.org"'))
    write(tmp_path, "broken.yaml", "interactions:\n  - request: [unclosed\n")
    mixed = CliRunner().invoke(app, ["lint-cassettes", str(tmp_path)])
    assert mixed.exit_code == 1
    assert "leaky.yaml:" in mixed.stdout and "email" in mixed.stdout
    assert mixed.stdout.endswith("1 secret(s) in 1 of 3 cassette file(s); 1 could not be read\n")
    assert "broken.yaml:3: not valid YAML" in mixed.stderr and "broken.yaml" not in mixed.stdout
