"""How long a pytest session takes to fail when its judge server is down (issue 33: "fails fast").

Writes N tests that each ask the judge once (``expect(...).is_relevant_to``), points
``--jurybox-model`` at a port nothing listens on, and times the session twice: with the
plugin's one check per session (what users get), and with the check skipped, each test
then paying the model's retries. Prints seconds per test for both.

    .venv/bin/python benchmarks/pytest_dead_judge.py --tests 5
"""

from __future__ import annotations

import argparse
import os
import socket
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

TESTS = """
    import pytest
    from jurybox.testing import expect

    @pytest.mark.parametrize("n", range({count}))
    def test_judged(n):
        expect(f"Refunds take {{n}} days.", query="How do refunds work?").is_relevant_to("refund policy")
"""

# Skips the session's check: the model is used as built, with its retries (the behaviour before issue 33).
NO_CHECK = """
import jurybox.pytest_plugin._plugin as plugin
plugin.server_problem = lambda model: None
"""


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port  # closed again: connections to it are refused


def session(folder: Path, port: int, *, check: bool) -> float:
    (folder / "conftest.py").write_text("" if check else NO_CHECK, encoding="utf-8")
    env = {**os.environ, "OPENAI_API_KEY": "sk-bench", "JURYBOX_CACHE": "off"}
    started = time.perf_counter()
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "--jurybox-model",
            f"openai:m@http://127.0.0.1:{port}/v1",
        ],
        cwd=folder,
        env=env,
        capture_output=True,
        check=False,
    )
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tests", type=int, default=5)
    args = parser.parse_args()
    port = free_port()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        (folder / "test_judged.py").write_text(textwrap.dedent(TESTS.format(count=args.tests)), encoding="utf-8")
        checked = session(folder, port, check=True)
        unchecked = session(folder, port, check=False)
    print(f"{args.tests} tests, judge server refusing connections at 127.0.0.1:{port}")
    print(f"with the session's one check: {checked:6.2f} s  ({checked / args.tests:.2f} s per test, start-up included)")
    print(f"without it (retries per test): {unchecked:6.2f} s  ({unchecked / args.tests:.2f} s per test)")


if __name__ == "__main__":
    main()
