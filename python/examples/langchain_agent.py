"""LangChain: the drop-in client's tools, called as an agent would (no model
needed: the call below is what a model's tool call turns into)."""

import asyncio
import sys

from toolbridge.langchain import MultiServerMCPClient


async def main() -> None:
    client = MultiServerMCPClient(
        {
            # Any stdio, http, sse or websocket connection of langchain-mcp-adapters.
            "example": {"command": sys.executable, "args": ["-m", "toolbridge", "example-server"], "transport": "stdio"},
        }
    )
    async with client:  # closes every server at the end
        tools = await client.get_tools()  # a failing server is skipped, see client.failures
        hello = next(t for t in tools if t.name == "hello")
        message = await hello.ainvoke({"type": "tool_call", "id": "call_1", "name": "hello", "args": {"name": "Ada"}})
        print(message.content[0]["text"])  # Hello, Ada!


asyncio.run(main())
