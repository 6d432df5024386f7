"""Test an MCP server directly: a case calls one tool (or lists the tools, or reads a resource), no model involved.

A case's ``mcp_call`` becomes a target whose one "reply" is what the server
returned: the result's text is the output the judges read, and the call itself
is the trace's one tool call (with the result as a value when it is JSON), so
``tool_calls``, ``valid_json``, ``json_schema``, ``contains``, LLM judges, any
judge works on it. A tool that fails is recorded like any tool error
(``{"error": ...}``) and judged; a server that is down is an AgentError.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from jurybox.agents._errors import AgentError, TargetConfigError
from jurybox.agents._mcp import McpTarget, mcp_field, tool_result_value
from jurybox.agents._reply import AgentReply
from jurybox.core import ToolCall

KINDS = ("tool", "list_tools", "resource")


@dataclass(frozen=True)
class McpCall:
    """What a case asks the server: ``tool`` with ``arguments``, ``list_tools``, or ``resource`` (a URI)."""

    tool: str | None = None
    arguments: Mapping[str, Any] = field(default_factory=dict)
    list_tools: bool = False
    resource: str | None = None

    def __post_init__(self) -> None:
        chosen = [on for on in (self.tool, self.list_tools, self.resource) if on]
        if len(chosen) != 1:
            raise TargetConfigError("mcp_call: give exactly one of tool (with arguments), list_tools: true or resource")

    @property
    def prompt(self) -> str:
        """The call as the case's prompt shows it in reports."""
        if self.tool:
            return f"mcp_call {self.tool} {json.dumps(dict(self.arguments), ensure_ascii=False, sort_keys=True)}"
        return "mcp_call list_tools" if self.list_tools else f"mcp_call resource {self.resource}"

    @classmethod
    def from_spec(cls, spec: Mapping[str, Any]) -> McpCall:
        return cls(
            tool=spec.get("tool"),
            arguments=dict(spec.get("arguments") or {}),
            list_tools=bool(spec.get("list_tools", False)),
            resource=spec.get("resource"),
        )


class McpCallTarget:
    """An MCP target seen through one direct call: every message gets the call's result, whatever it says."""

    def __init__(self, target: Any, call: McpCall) -> None:
        if not isinstance(target, McpTarget):
            raise TargetConfigError("mcp_call needs the suite's agent to be an MCP server (agent: {mcp: ...})")
        self.target = target
        self.call = call
        self.name = target.name

    async def respond(self, message: str, session_id: str) -> AgentReply:
        session = await self.target.session()
        try:
            return await self._ask(session)
        except AgentError:
            raise
        except Exception as exc:
            # A protocol error (unknown tool, bad arguments): recorded and judged like a tool's own error.
            detail = self.target._scrub(f"{type(exc).__name__}: {exc}")
            name = self.call.tool or ("list_tools" if self.call.list_tools else "read_resource")
            failed = ToolCall(name=name, arguments=dict(self.call.arguments), result={"error": detail})
            return AgentReply(text=f"error: {detail}", tool_calls=(failed,))

    async def _ask(self, session: Any) -> AgentReply:
        if self.call.tool:
            result = await session.call_tool(self.call.tool, dict(self.call.arguments))
            value, shown = tool_result_value(result)
            call = ToolCall(name=self.call.tool, arguments=dict(self.call.arguments), result=value)
            return AgentReply(text=shown, tool_calls=(call,))
        if self.call.list_tools:
            listing = await session.list_tools()
            tools = [
                {
                    "name": tool.name,
                    "description": tool.description or "",
                    "input_schema": mcp_field(tool, "input_schema", "inputSchema") or {},
                }
                for tool in listing.tools
            ]
            text = "\n".join(f"{t['name']}: {t['description']}".rstrip(": ") for t in tools)
            return AgentReply(text=text, tool_calls=(ToolCall(name="list_tools", arguments={}, result=tools),))
        assert self.call.resource is not None
        read = await session.read_resource(self.call.resource)
        texts = [getattr(item, "text", None) for item in getattr(read, "contents", ()) or ()]
        text = "\n".join(t for t in texts if isinstance(t, str))
        call = ToolCall(name="read_resource", arguments={"uri": self.call.resource}, result=text)
        return AgentReply(text=text, tool_calls=(call,))

    async def close_session(self, session_id: str) -> None:
        return None

    async def aclose(self) -> None:
        return None  # the suite's MCP target is closed by whoever made it
