"""The pool itself: tools for a provider, a call, and a provider's response run."""

import asyncio
import sys

import toolbridge


async def main() -> None:
    config = {"mcpServers": {"example": {"command": sys.executable, "args": ["-m", "toolbridge", "example-server"]}}}
    async with toolbridge.Pool(config) as pool:
        tools = await pool.tools(format="anthropic")  # or "openai", "gemini", "mcp"
        print(len(tools), tools[0]["name"])
        result = await pool.call("example", "hello", {"name": "Ada"}, timeout=10)
        print(result["content"][0]["text"])
        response = {"role": "assistant", "content": [
            {"type": "tool_use", "id": "toolu_1", "name": "mcp__example__hello", "input": {"name": "Bo"}}]}
        print(await pool.exec(response, format="anthropic"))  # the tool_result message to append


asyncio.run(main())
