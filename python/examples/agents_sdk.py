"""OpenAI Agents SDK: toolbridge servers in `Agent(mcp_servers=[...])`, each
with its own tool filter, sharing one pool (no API key needed to list and
call the agent's tools)."""

import asyncio
import sys

from agents import Agent, RunContextWrapper

import toolbridge
from toolbridge.agents import MCPServer


async def main() -> None:
    config = {"mcpServers": {"example": {"command": sys.executable, "args": ["-m", "toolbridge", "example-server"]}}}
    async with toolbridge.Pool(config) as pool:
        greeter = MCPServer(pool, "example", tool_filter={"allowed_tool_names": ["hello"]})
        agent = Agent(name="greeter", instructions="Greet people.", mcp_servers=[greeter])
        # Runner.run(agent, "Say hello to Ada") would now offer the model these:
        tools = await agent.get_all_tools(RunContextWrapper(context=None))
        print([t.name for t in tools])  # ['hello']
        result = await greeter.call_tool("hello", {"name": "Ada"})
        print(result.content[0].text)  # Hello, Ada!


asyncio.run(main())
