"""A ``RateSignal`` through Redis: 429s shared by processes that share no Ray run (``--workers``, several hosts).

``JURYBOX_RATE_URL=redis://HOST:6379/0`` makes every process that reads it share its 429s
(``rate_board`` installs it on first use). Per endpoint key one hash holds the shrink
generation and the pause deadline; each change is also appended to one stream, which is
what the listeners long-poll (``XREAD BLOCK``): a broadcast that loses nothing, in order.
A report is one Lua script, so the once-per-burst rule holds however many processes report
at once, and its deadline is on the Redis server's clock (``TIME``): reports carry durations,
answers give durations left, so the processes' clocks need not agree.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit, urlunsplit

from jurybox.models._errors import ModelConfigError
from jurybox.models._rate_signal import RateState

REDIS_PREFIX = "jurybox:rates:"
STREAM_LENGTH = 1000
"""Changes the stream keeps (approximately): a listener further behind re-reads the hashes' news it missed."""
KEY_TTL_MS = 86_400_000
"""An endpoint's record lasts a day after its last 429."""

# KEYS: the endpoint's hash, the stream. ARGV: endpoint key, generation, pause in ms.
_REPORT = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local current = tonumber(redis.call('HGET', KEYS[1], 'generation') or '0')
local deadline = tonumber(redis.call('HGET', KEYS[1], 'deadline') or '0')
local generation = tonumber(ARGV[2])
local new_generation = current
if generation >= current then new_generation = generation + 1 end
local new_deadline = math.max(deadline, now + tonumber(ARGV[3]))
if new_generation == current and new_deadline == deadline then return 0 end
redis.call('HSET', KEYS[1], 'generation', new_generation, 'deadline', new_deadline)
redis.call('PEXPIRE', KEYS[1], ARGV[4])
redis.call('XADD', KEYS[2], 'MAXLEN', '~', ARGV[5], '*', 'key', ARGV[1], 'generation', new_generation,
    'deadline', new_deadline)
return 1
"""


class RedisRateSignal:
    """Rate limits shared through the Redis server at ``url`` (``?prefix=`` separates teams or runs).

    Raises:
        ModelConfigError: the redis client is not installed, or the URL is malformed.
    """

    def __init__(self, url: str) -> None:
        from jurybox.models._cache_remote import redact, redis_module  # as the Redis cache words its URLs

        redis = redis_module(f"shared rate limits at {redact(url)}")
        parts = urlsplit(url)
        query = parse_qs(parts.query, keep_blank_values=True)
        self.prefix = (query.pop("prefix", None) or [REDIS_PREFIX])[-1] or REDIS_PREFIX
        server = urlunsplit((*parts[:3], urlencode(query, doseq=True), parts.fragment))
        try:
            # The socket timeout outlasts a long poll's block (WAIT_TIMEOUT, 10 s).
            self._client: Any = redis.Redis.from_url(server, socket_connect_timeout=5, socket_timeout=30)
        except ValueError as error:
            raise ModelConfigError(f"cannot share rate limits at {redact(url)}: {error}") from error
        self._stream = self.prefix + "events"
        self._report = self._client.register_script(_REPORT)
        self._last = "0"  # the stream entry read last: from the start, so a new process learns the latest news
        self._read = 0
        # Reports leave the event loop at once: one thread sends them, in order.
        self._sender = ThreadPoolExecutor(max_workers=1, thread_name_prefix="jurybox-rate-report")

    def publish(self, key: str, generation: int, pause: float) -> None:
        self._sender.submit(self._send, key, generation, pause)

    def _send(self, key: str, generation: int, pause: float) -> None:
        keys = [self.prefix + "key:" + key, self._stream]
        self._report(keys=keys, args=[key, generation, round(pause * 1000), KEY_TTL_MS, STREAM_LENGTH])

    def wait(self, version: int, timeout: float) -> tuple[int, dict[str, RateState]]:
        # The version is this listener's own count of entries read (the stream's ids are not ints).
        answer = self._client.xread({self._stream: self._last}, block=max(1, round(timeout * 1000)), count=500)
        if not answer:
            return self._read, {}
        latest: dict[str, tuple[int, int]] = {}
        for entry_id, fields in answer[0][1]:
            self._last, self._read = entry_id, self._read + 1
            key = fields[b"key"].decode()
            generation, deadline = int(fields[b"generation"]), int(fields[b"deadline"])
            known = latest.get(key, (0, 0))
            latest[key] = (max(known[0], generation), max(known[1], deadline))
        seconds, micros = self._client.time()
        now = seconds * 1000 + micros // 1000
        return self._read, {
            key: RateState(generation, max(0, deadline - now) / 1000) for key, (generation, deadline) in latest.items()
        }

    def close(self) -> None:
        self._sender.shutdown(wait=False)
        self._client.close()
