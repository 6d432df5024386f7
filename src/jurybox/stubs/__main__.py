"""``python -m jurybox.stubs openai --port 0 --latency 0.2``: one stub server in its own process.

``--script replies.yaml`` serves scripted replies (tool calls, then answers that use the tool's result).

Prints the base URL on stdout (one line, flushed) once the server accepts connections,
then serves until interrupted. ``GET <url>/_stub/stats`` returns its counters as JSON:
requests received, TCP connections accepted and the most requests in flight at once;
``--stats`` also reports the CPU seconds the stub process used (``cpu_s``);
``--stats`` prints the same counters as one JSON line on stderr when it stops (SIGINT or SIGTERM).
"""

from __future__ import annotations

import argparse
import json
import resource
import signal
import sys
from collections.abc import Sequence

from jurybox.inputs import CassetteError
from jurybox.stubs._replies import PROVIDERS, ReplySource
from jurybox.stubs._script import ScriptError, load_script
from jurybox.stubs._server import StubServer


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m jurybox.stubs", description=__doc__.splitlines()[0])
    parser.add_argument("provider", choices=PROVIDERS)
    parser.add_argument("--port", type=int, default=0, help="TCP port on 127.0.0.1 (0: a free one)")
    parser.add_argument("--latency", type=float, default=0.0, help="seconds before each reply")
    parser.add_argument("--reply", default="ok", help="the reply text for every request")
    parser.add_argument("--replay", help="a vcrpy cassette whose recorded responses are served in order")
    parser.add_argument(
        "--script",
        help="a YAML file of replies in order or rules per request, tool calls included (docs/agents.md)",
    )
    parser.add_argument(
        "--stats",
        action="store_true",
        help="on exit, print one JSON line to stderr: connections accepted, requests, most in flight",
    )
    return parser


def _cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def main(argv: Sequence[str] | None = None) -> None:
    parser = _parser()
    args = parser.parse_args(argv)
    reply: ReplySource = args.reply
    if args.script is not None:
        if args.replay is not None:
            parser.error("give --script or --replay, not both")
        try:
            reply = load_script(args.script)
        except ScriptError as error:
            parser.error(str(error))
    try:
        server = StubServer(args.provider, reply, latency=args.latency, replay=args.replay, port=args.port)
    except CassetteError as error:  # --replay names a file that is not a cassette jurybox can replay
        parser.error(str(error))
    # Nothing in this process reads the requests back: a load run of a million would keep gigabytes.
    server.state.keep_requests = False

    def ready(stub: StubServer) -> None:
        print(stub.base_url, flush=True)

    def interrupt(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    # SIGTERM before uvicorn installs its handlers (or re-raised by uvicorn after) must still print the stats.
    signal.signal(signal.SIGTERM, interrupt)
    try:
        server.serve_forever(on_ready=ready)
    except KeyboardInterrupt:
        pass
    finally:
        if args.stats:
            stats = {
                "connections": server.connections,
                "requests": server.state.received,
                "max_in_flight": server.max_in_flight,
                "cpu_s": round(_cpu_seconds(), 3),
            }
            print(json.dumps(stats), file=sys.stderr, flush=True)
    sys.exit(0)


if __name__ == "__main__":
    main()
