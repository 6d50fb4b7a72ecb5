"""toolbridge.agents: an MCPServer for the OpenAI Agents SDK, against real
servers; the SDK's own tool conversion and invocation path (no model)."""

from __future__ import annotations

import json

import pytest
from agents import Agent, RunContextWrapper
from agents.mcp import MCPUtil

import toolbridge
from conftest import example_server, py_sdk_server
from toolbridge.agents import MCPServer


@pytest.fixture
async def pool():
    async with toolbridge.Pool({"mcpServers": {"example": example_server(), "py": py_sdk_server()}}) as pool:
        yield pool


async def test_connect_list_call_and_cleanup(pool: toolbridge.Pool) -> None:
    server = MCPServer(pool, "py")
    await server.connect()
    tools = await server.list_tools()
    assert {"add", "count", "greet"} - {"greet"} <= {t.name for t in tools}
    result = await server.call_tool("add", {"a": 4, "b": 4})
    assert result.content[0].text == "8"
    prompts = await server.list_prompts()
    assert [p.name for p in prompts.prompts] == ["greet"]
    await server.cleanup()
    # The connection belongs to the pool: still there for the next agent.
    assert "py" in pool.running_server_names
    with pytest.raises(ValueError, match="no server named 'ghost'"):
        MCPServer(pool, "ghost")


async def test_in_an_agent_with_tool_filters(pool: toolbridge.Pool) -> None:
    static = MCPServer(pool, "example", tool_filter={"allowed_tool_names": ["hello"]})
    dynamic = MCPServer(pool, "py", tool_filter=lambda context, tool: tool.name != "fail")
    agent = Agent(name="assistant", mcp_servers=[static, dynamic])
    context = RunContextWrapper(context=None)
    tools = await agent.get_all_tools(context)
    names = {t.name for t in tools}
    assert "hello" in names and "echo" not in names
    assert "add" in names and "fail" not in names
    add = next(t for t in tools if t.name == "add")
    output = await MCPUtil.invoke_mcp_tool(dynamic, next(t for t in await dynamic.list_tools(context, agent) if t.name == "add"), context, json.dumps({"a": 1, "b": 2}))
    assert "3" in json.dumps(output, default=str)
    assert add.name == "add"


async def test_a_calls_meta_is_refused_not_dropped(pool: toolbridge.Pool) -> None:
    from agents.exceptions import UserError

    server = MCPServer(pool, "py")
    with pytest.raises(UserError, match="tool 'add' was called with _meta \\(trace\\), which toolbridge's pool does not send"):
        await server.call_tool("add", {"a": 1, "b": 2}, meta={"trace": "t1"})
    assert (await server.call_tool("add", {"a": 1, "b": 2}, meta=None)).content[0].text == "3"
