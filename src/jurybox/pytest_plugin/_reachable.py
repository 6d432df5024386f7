"""The session's one check that the judge server answers, and a model that fails at once when it did not.

Without it, every test that asks a dead judge server pays the retries (about 9 s each with
the default policy) and says so in a long line per test. With it, the server is asked once,
on the first test that needs the judge; when it did not answer, each later call that the
response cache cannot answer fails at once with one line naming the server, and the
session's summary says how many tests met it.
"""

from __future__ import annotations

import socket
from typing import Any
from urllib.parse import urlsplit

from jurybox.core import error_reason
from jurybox.models import CacheOnlyModel, ProbeTarget

#: Seconds the session's check waits for the judge server (the CLI's pre-run check waits as long).
CHECK_TIMEOUT = 2.0


def server_problem(model: Any, *, timeout: float = CHECK_TIMEOUT) -> str | None:
    """Whether ``model``'s server takes a connection: None when it does (or there is none), else why not.

    A TCP connection, not an HTTP request: a test's cassette patches the HTTP clients, and
    the check must neither be recorded on a cassette nor be refused by one on replay.
    """
    target_of = getattr(model, "probe_target", None)
    if not callable(target_of):
        return None  # a FakeModel, a user's Python model: nothing to reach
    target = target_of()
    if not isinstance(target, ProbeTarget):
        return None
    address = urlsplit(target.check_url)
    if not address.hostname:
        return None
    port = address.port or (443 if address.scheme == "https" else 80)
    try:
        with socket.create_connection((address.hostname, port), timeout=timeout):
            return None
    except OSError as error:
        return error_reason(error, url=target.url)


class UnreachableJudgeModel(CacheOnlyModel):
    """The session's judge model after its server failed the check: cache hits only, misses fail at once.

    A reply the response cache holds is still given (a fully recorded session passes with the
    server down, and its summary says the replies came from the cache); any other call fails
    after one attempt with the check's finding, never after the retries.
    """

    def __init__(self, model: Any, problem: str) -> None:
        super().__init__(
            model, problem, checked="checked once for this pytest session: tests that need the judge fail at once"
        )
