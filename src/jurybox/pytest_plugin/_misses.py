"""A short failure for a request its cassette cannot replay, instead of vcrpy's traceback.

vcrpy raises ``CannotOverwriteExistingCassetteException`` deep inside the HTTP
client, and an SDK may wrap it (openai raises ``APIConnectionError`` with it as
the cause after its retries). The test then fails with some 60 lines of SDK,
httpx and vcr frames and vcrpy's hint about *its* default record mode. This
module finds the exception in the chain and says, in a few lines, which request
was not on which cassette, how it differs from the closest recorded one, and the
exact command that records it.
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Any

from jurybox.core import read_json
from jurybox.pytest_plugin._secrets import ALL_RULES

#: vcrpy's exception for a request its cassette cannot play (matched by name: vcr is imported lazily).
MISS_NAME = "CannotOverwriteExistingCassetteException"
#: How deep the ``__cause__``/``__context__`` chain is searched.
CHAIN_LIMIT = 10
#: How much of a value the difference line shows.
VALUE_LIMIT = 60
_ABSENT = object()


def unplayable_error(error: BaseException | None) -> BaseException | None:
    """vcrpy's "cannot play this request" exception in ``error``'s chain, else None."""
    seen = 0
    while error is not None and seen < CHAIN_LIMIT:
        if type(error).__name__ == MISS_NAME:
            return error
        error, seen = error.__cause__ or error.__context__, seen + 1
    return None


def recorded_miss(error: BaseException | None, cassette: Any) -> BaseException | None:
    """The cassette's first miss when ``error`` only quotes one (an ERROR verdict's text names it).

    A test that catches a miss on purpose and then fails for another reason keeps its own failure:
    the error must name vcrpy's exception to be replaced.
    """
    if error is None or MISS_NAME not in str(error):
        return None
    misses = getattr(cassette, "jurybox_misses", None) or []
    return misses[0] if misses else None


def miss_message(error: BaseException, *, test: str, cassette: Path | None, record_mode: str) -> str:
    """The failure text: the missing request first, then the cassette, the closest difference and the command.

    Args:
        error: vcrpy's exception (its ``failed_request``, ``reason`` and ``similar_requests`` are read
            when present).
        test: The test's node id as the user would type it (``tests/test_x.py::test_y``).
        cassette: The cassette file, when known.
        record_mode: jurybox's record mode of this run.
    """
    request = getattr(error, "failed_request", None)
    what = f"{request.method} {_scrub(request.uri)}" if request is not None else "a request"
    reason = getattr(error, "reason", None)
    exists = cassette.is_file() if cassette is not None else reason != "cassette_not_found"
    where = str(cassette) if cassette is not None else "the cassette"
    lines = [f"{what} is not on cassette {where} (record mode {record_mode}: nothing was sent)"]
    if not exists:
        lines.append("  the cassette file does not exist yet")
    elif reason == "already_played":
        lines.append(
            "  every matching interaction on it was already played: the test sends it more times than recorded"
        )
    else:
        lines.extend(f"  {line}" for line in _closest(error, request))
    # ``once`` only writes a cassette that does not exist; a stale one is re-recorded whole.
    mode = "once" if not exists else "rewrite"
    lines.append(f"  record it: pytest --record-mode {mode} {shlex.quote(test)}")
    if exists:
        lines.append("  (or --record-mode new_episodes to keep what is on it and add this request)")
    return "\n".join(lines)


def _closest(error: BaseException, request: Any) -> list[str]:
    similar = list(getattr(error, "similar_requests", None) or [])
    if not similar:
        return ["nothing recorded on it looks like this request (different method, host or path)"]
    recorded, _, failed = similar[0]
    lines = []
    for matcher, message in failed:
        if matcher == "json_body" and request is not None:
            found = first_difference(_json(recorded.body), _json(request.body))
            if found is not None:
                path, before, after = found
                lines.append(
                    f"the closest recorded request differs in the body at {path}: "
                    f"recorded {_show(before)}, sent {_show(after)}"
                )
                continue
        lines.append(f"the closest recorded request differs in {matcher}: {_shorten(_scrub(str(message)), 120)}")
    return lines or ["it matches a recorded request that was already played"]


def first_difference(recorded: Any, sent: Any, path: str = "") -> tuple[str, Any, Any] | None:
    """The first place two JSON values differ, as ``(path, recorded, sent)``, or None when equal.

    Paths read like ``messages[0].content``; a key present on one side only shows as absent on the other.
    """
    if isinstance(recorded, dict) and isinstance(sent, dict):
        for key in sorted(set(recorded) | set(sent), key=str):
            inner = f"{path}.{key}" if path else str(key)
            found = first_difference(recorded.get(key, _ABSENT), sent.get(key, _ABSENT), inner)
            if found is not None:
                return found
        return None
    if isinstance(recorded, list) and isinstance(sent, list):
        for index in range(max(len(recorded), len(sent))):
            left = recorded[index] if index < len(recorded) else _ABSENT
            right = sent[index] if index < len(sent) else _ABSENT
            found = first_difference(left, right, f"{path}[{index}]")
            if found is not None:
                return found
        return None
    if recorded == sent and type(recorded) is type(sent):
        return None
    return (path or "the top level", recorded, sent)


def _json(body: Any) -> Any:
    if isinstance(body, bytes):
        try:
            body = body.decode("utf-8")
        except UnicodeDecodeError:
            return _ABSENT
    if not isinstance(body, str):
        return _ABSENT
    try:
        return read_json(body)
    except ValueError:
        return _ABSENT


def _show(value: Any) -> str:
    if value is _ABSENT:
        return "nothing"
    text = json.dumps(value, ensure_ascii=False)
    return _shorten(_scrub(text), VALUE_LIMIT)


def _scrub(text: str) -> str:
    # A URL or a body may hold a key or personal data; a failure message ends up in CI logs.
    return ALL_RULES.scrub(text)


def _shorten(text: str, limit: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"
