"""A tiny MCP server (stdio) with rental tools, started by the MCP adapter tests."""

from __future__ import annotations

try:  # mcp 2.x
    from mcp.server.mcpserver import MCPServer as Server
except ImportError:  # mcp 1.x
    from mcp.server.fastmcp import FastMCP as Server  # type: ignore[no-redef,attr-defined]

server = Server("rentals")

RATES = {"Beach House": 320, "Mountain Cabin": 210}


@server.tool()
def nightly_rate(listing: str) -> str:
    """The nightly rate of a listing, in US dollars."""
    if listing not in RATES:
        raise ValueError(f"no listing named {listing}")
    return f"{listing}: ${RATES[listing]} per night"


@server.tool()
def quote(listing: str, nights: int) -> str:
    """The price of a stay: nights times the nightly rate."""
    return f"${RATES[listing] * nights}"


if __name__ == "__main__":
    server.run()
