"""Chat with the property assistant in a terminal: ``python -m examples.property_agent``."""

from __future__ import annotations

import argparse
import sys
import uuid

from examples.property_agent.agent import PropertyAgent


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m examples.property_agent", description=__doc__)
    parser.add_argument("--db", help="SQLite file (default: $JURYBOX_PROPERTY_DB or .jurybox/property_agent.db)")
    parser.add_argument("--session", default=None, help="session id to continue (default: a new one)")
    parser.add_argument("--offline", action="store_true", help="use the built-in policy even if a model is set")
    parser.add_argument("--seeds", help="folder of seed Markdown files (house rules, notes, reviews)")
    parser.add_argument("--forget", action="store_true", help="delete the session's stored messages first")
    parser.add_argument("message", nargs="*", help="send one message and exit (default: interactive)")
    args = parser.parse_args(argv)

    agent = PropertyAgent(args.db, offline=args.offline, seeds=args.seeds)
    session = args.session or f"cli-{uuid.uuid4().hex[:8]}"
    if args.forget:
        agent.store.forget(session)
    if args.message:
        print(agent.respond(" ".join(args.message), session)["reply"])
        return 0
    print(f"Property assistant ({agent.backend}), session {session}, database {agent.store.path}. Ctrl-D to quit.")
    while True:
        try:
            message = input("you> ").strip()
        except (EOFError, KeyboardInterrupt):
            print()
            return 0
        if not message:
            continue
        reply = agent.respond(message, session)
        for call in reply["tool_calls"]:
            print(f"  [tool] {call['name']}({call['arguments']})", file=sys.stderr)
        print(f"assistant> {reply['reply']}")


if __name__ == "__main__":
    raise SystemExit(main())
