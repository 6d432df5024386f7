"""The rental MCP server over HTTP (streamable HTTP or SSE), for the MCP adapter's HTTP tests.

Usage: python mcp_http_server.py TRANSPORT PORT [TOKEN]. With a TOKEN, every
request must carry ``Authorization: Bearer TOKEN`` (a 401 otherwise), so the
tests see the adapter's headers reach the server. It adds a tool returning a
dict, whose result the adapter must record as a value, not as JSON text.
"""

from __future__ import annotations

import sys
from typing import Any

import uvicorn
from mcp_rental_server import RATES, server


@server.tool()
def listing(name: str) -> dict[str, Any]:
    """A listing's details as a record."""
    return {"name": name, "nightly_rate": RATES[name], "pets": name == "Mountain Cabin"}


def _guarded(app: Any, token: str) -> Any:
    async def guard(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            sent = dict(scope["headers"]).get(b"authorization", b"").decode()
            if sent != f"Bearer {token}":
                await send({"type": "http.response.start", "status": 401, "headers": []})
                await send({"type": "http.response.body", "body": b"unauthorized"})
                return
        await app(scope, receive, send)

    return guard


if __name__ == "__main__":
    transport, port = sys.argv[1], int(sys.argv[2])
    app = server.sse_app() if transport == "sse" else server.streamable_http_app()
    if len(sys.argv) > 3:
        app = _guarded(app, sys.argv[3])
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning")
