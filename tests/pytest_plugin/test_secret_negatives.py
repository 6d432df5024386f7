"""What the secret detector must leave alone: ordinary text, numbers, code, provider traffic and model replies.

Generated prose mixes the numbers people write (prices, years, dates, times,
versions, percentages, counts), model names, code identifiers, file paths and
documentation URLs; real model replies come from tests/data/judge_outputs and
real provider traffic from the 33 cassettes in tests/data/cassettes/foreign
(sources in tests/data/SOURCES.md). None of it may be flagged, except what the
traffic really holds (cookies, organization ids, a thinking block's signature).
"""

from __future__ import annotations

import gzip
import json
import zlib
from pathlib import Path
from typing import Any

import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from jurybox.pytest_plugin import ALL_RULES
from jurybox.pytest_plugin._lint import lint_file
from jurybox.pytest_plugin._structure import Walker

DATA = Path(__file__).resolve().parents[1] / "data"
FOREIGN = sorted((DATA / "cassettes" / "foreign").rglob("*.yaml"))

WORDS = (
    "the", "model", "answer", "refund", "policy", "customer", "shipping", "order", "weather", "report", "summary",
    "budget", "quarter", "revenue", "growth", "latency", "cache", "request", "response", "python", "function",
    "token", "key", "session", "password", "secret", "signature", "credentials", "author", "authority",
)  # fmt: skip


def _number(draw: st.DrawFn) -> str:
    kind = draw(st.sampled_from(("price", "year", "range", "date", "time", "version", "percent", "count", "decimal")))
    n = draw(st.integers(min_value=0, max_value=99_999))
    year = draw(st.integers(min_value=1900, max_value=2099))
    if kind == "price":
        return f"${n:,}.{n % 100:02d}"
    if kind == "year":
        return str(year)
    if kind == "range":
        return f"{year}-{year + n % 50}"
    if kind == "date":
        month, day = n % 12 + 1, n % 28 + 1
        return draw(
            st.sampled_from((f"{year}-{month:02d}-{day:02d}", f"{month}/{day}/{year}", f"{day}.{month}.{year}"))
        )
    if kind == "time":
        return f"{n % 24:02d}:{n % 60:02d}"
    if kind == "version":
        return f"v{n % 20}.{n % 13}.{n % 7}"
    if kind == "percent":
        return f"{n % 100}.{n % 10}%"
    if kind == "count":
        return f"{n * 1000 + n % 1000:,}"
    return f"{n / 7:.6f}"


def _identifier(draw: st.DrawFn) -> str:
    words = draw(st.lists(st.sampled_from(WORDS), min_size=2, max_size=5))
    style = draw(st.sampled_from(("camel", "snake", "dotted", "pascal")))
    if style == "camel":
        return words[0] + "".join(w.capitalize() for w in words[1:])
    if style == "pascal":
        return "".join(w.capitalize() for w in words)
    return ("_" if style == "snake" else ".").join(words)


MODEL_NAMES = (
    "gpt-4o-mini-2024-07-18", "claude-3-5-sonnet-20241022", "gemini-1.5-pro-002", "llama3.1:8b-instruct-q4_K_M",
    "Meta-Llama-3.1-70B-Instruct-Turbo", "mistralai/Mixtral-8x7B-Instruct-v0.1", "text-embedding-3-small",
    "deepseek-r1-distill-llama-70b", "Qwen2.5-Coder-32B-Instruct",
)  # fmt: skip
HEADINGS = ("Note", "Key points", "Summary", "Step 1", "Token usage", "Session plan", "Password requirements")


@st.composite
def ordinary_text(draw: st.DrawFn) -> str:
    """A paragraph of prose with numbers, model names, identifiers, paths and URLs, and no secret."""
    parts = []
    for _ in range(draw(st.integers(min_value=3, max_value=12))):
        piece = draw(st.sampled_from(("words", "number", "model", "identifier", "path", "url", "heading")))
        if piece == "words":
            parts.append(" ".join(draw(st.lists(st.sampled_from(WORDS), min_size=1, max_size=8))))
        elif piece == "number":
            parts.append(_number(draw))
        elif piece == "model":
            parts.append(draw(st.sampled_from(MODEL_NAMES)))
        elif piece == "identifier":
            parts.append(f"`{_identifier(draw)}()`")
        elif piece == "path":
            parts.append("/".join(["", *draw(st.lists(st.sampled_from(WORDS), min_size=1, max_size=4))]) + ".py")
        elif piece == "url":
            words = draw(st.lists(st.sampled_from(WORDS), min_size=1, max_size=3))
            parts.append(f"https://docs.example.com/{'/'.join(words)}?page={draw(st.integers(1, 99))}&sort=asc")
        else:
            words = draw(st.lists(st.sampled_from(WORDS), min_size=2, max_size=6))
            parts.append(f"{draw(st.sampled_from(HEADINGS))}: {' '.join(words)}")
    return draw(st.sampled_from((" ", ". ", ", ", "\n"))).join(parts)


@settings(max_examples=300, derandomize=True, deadline=None)
@given(text=ordinary_text())
def test_ordinary_text_is_never_flagged(text: str) -> None:
    assert list(ALL_RULES.find(text)) == []
    assert Walker(ALL_RULES).body(text) == text


def test_model_usage_and_logprobs_fields_are_kept() -> None:
    reply = {
        "usage": {"prompt_tokens": 12, "completion_tokens": 30, "total_tokens": 42, "max_tokens": 100},
        "choices": [{"logprobs": {"content": [{"token": "Hello", "logprob": -0.1, "bytes": [72]}]}}],
        "system_fingerprint": "fp_44709d6fcb",
        "id": "chatcmpl-9Xtj47S36iWNBARmBocBaifGBbjtw",
        "tool_calls": [{"id": "call_1EYWDzueHEp8OsB8jJSEp7WB", "function": {"arguments": '{"key": "color"}'}}],
        "token_type": "Bearer",
        "keep_alive": "5m",
    }
    text = json.dumps(reply)
    walker = Walker(ALL_RULES)
    assert walker.body(text) == text
    assert walker.hits == []


def _strings(value: Any, name: str = "") -> list[tuple[str, str]]:
    if isinstance(value, dict):
        return [pair for key, item in value.items() for pair in _strings(item, str(key))]
    if isinstance(value, list):
        return [pair for item in value for pair in _strings(item, name)]
    return [(name, value)] if isinstance(value, str) else []


def test_real_model_replies_are_not_flagged() -> None:
    # GPT-4 judgments of MT-bench answers and Qwen3 think-tag replies: prose, code, numbers, math.
    strings: list[tuple[str, str]] = []
    for path in sorted((DATA / "judge_outputs").iterdir()):
        text = path.read_text(encoding="utf-8")
        documents = (
            [json.loads(line) for line in text.splitlines() if line.strip()]
            if path.suffix == ".jsonl"
            else [json.loads(text)]
        )
        strings += [pair for document in documents for pair in _strings(document)]
    assert len(strings) > 500
    flagged = []
    for name, value in strings:
        walker = Walker(ALL_RULES)
        walker.string(value, name)
        flagged += [(name, hit) for hit in walker.hits]
    assert flagged == []


def _body(value: Any) -> str | None:
    if isinstance(value, dict):
        value = value.get("string")
    if isinstance(value, bytes):
        for opener in (gzip.decompress, zlib.decompress):
            try:
                value = opener(value)
                break
            except (OSError, zlib.error):
                continue
        return value.decode("utf-8", "replace")
    return value if isinstance(value, str) else None


def test_redaction_leaves_real_provider_traffic_as_it_was() -> None:
    # 33 cassettes from 8 projects: OpenAI, Anthropic, Ollama, Gemini, DeepSeek, OpenRouter; SSE, NDJSON, gzip.
    changed: list[tuple[str, list[Any]]] = []
    bodies = 0
    for path in FOREIGN:
        for interaction in yaml.safe_load(path.read_text(encoding="utf-8"))["interactions"]:
            for side in ("request", "response"):
                part = interaction[side]
                body = (
                    json.dumps(part["parsed_body"])
                    if "parsed_body" in part
                    else _body(part.get("body", part.get("content")))
                )
                if not body:
                    continue
                bodies += 1
                walker = Walker(ALL_RULES)
                if walker.body(body) != body:
                    changed.append((path.name, walker.hits))
    assert bodies > 90
    # The one change: an extended-thinking block's signature, under a credential name.
    assert [(name, [hit.kind for hit in hits]) for name, hits in changed] == [
        ("llm-anthropic__test_thinking_prompt.yaml", ["named-secret"])
    ]


def test_the_lint_reports_only_what_real_traffic_holds() -> None:
    kinds = {finding.pattern for path in FOREIGN for finding in lint_file(path)}
    assert kinds == {
        "header set-cookie", "header cookie", "header openai-organization", "header openai-project", "named-secret",
    }  # fmt: skip
