"""A stdio MCP server (the Python `mcp` SDK's low-level server) that plays
the Agents SDK's test `FakeMCPServer` for real: the tools it lists and the
content it answers come from the JSON file named by $FAKE_MCP_STATE, read
at each request; a call answers `result_{name}_{json.dumps(arguments)}` as
text, or the state's `custom_content`, with the state's `response_meta`.
See third_party/agents_fake_server.py."""

import json
import os
from typing import Any

import anyio
import mcp.types as types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

server = Server("fake_mcp_server")


def state() -> dict[str, Any]:
    with open(os.environ["FAKE_MCP_STATE"]) as f:
        return json.load(f)


@server.list_tools()
async def list_tools() -> list[types.Tool]:
    return [types.Tool.model_validate(t) for t in state()["tools"]]


@server.call_tool(validate_input=False)
async def call_tool(name: str, arguments: dict[str, Any] | None) -> types.CallToolResult:
    current = state()
    if current.get("custom_content") is not None:
        content = [types.TextContent.model_validate(c) if c.get("type") == "text" else c for c in current["custom_content"]]
    else:
        content = [types.TextContent(type="text", text=f"result_{name}_{json.dumps(arguments)}")]
    return types.CallToolResult(content=content, _meta=current.get("response_meta"))


async def main() -> None:
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


if __name__ == "__main__":
    anyio.run(main)
