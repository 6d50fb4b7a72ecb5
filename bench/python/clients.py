"""One benchmark run of one MCP client, in its own interpreter (the
client's venv): `python clients.py CLIENT MODE CALLS SERVER_JSON`.

CLIENT: toolbridge | toolbridge-langchain | langchain | langchain-session | fastmcp
MODE: seq (one call at a time), par (64 in flight), cold (one call: the
whole process is timed by bench.py, interpreter start to result).
Prints one JSON line: {"calls": N, "seconds": S}. Every call is the same
tools/call of `echo` on the same stdio server, and its answer is checked.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time

IN_FLIGHT = 64
TEXT = "hi"


def check(text: str) -> None:
    if TEXT not in text:
        raise SystemExit(f"unexpected answer: {text!r}")


async def run(calls: int, call, setup=None) -> float:
    """Times `calls` calls (sequentially or IN_FLIGHT at once) after one
    warm-up call; returns seconds."""
    mode = sys.argv[2]
    if mode == "cold":
        check(await call())
        return 0.0
    check(await call())
    start = time.perf_counter()
    if mode == "seq":
        for _ in range(calls):
            check(await call())
    else:
        sem = asyncio.Semaphore(IN_FLIGHT)

        async def one() -> None:
            async with sem:
                check(await call())

        await asyncio.gather(*(one() for _ in range(calls)))
    return time.perf_counter() - start


async def toolbridge_client(calls: int, server: dict) -> float:
    import toolbridge

    async with toolbridge.Pool({"mcpServers": {"s": server}}) as pool:

        async def call() -> str:
            return (await pool.call("s", "echo", {"text": TEXT}))["content"][0]["text"]

        return await run(calls, call)


async def langchain_client(calls: int, server: dict, module: str, session: bool) -> float:
    if module == "toolbridge":
        from toolbridge.langchain import MultiServerMCPClient, load_mcp_tools
    else:
        from langchain_mcp_adapters.client import MultiServerMCPClient
        from langchain_mcp_adapters.tools import load_mcp_tools
    client = MultiServerMCPClient({"s": {**server, "transport": "stdio"}})

    async def timed(tools) -> float:
        echo = next(t for t in tools if t.name == "echo")

        async def call() -> str:
            blocks = await echo.ainvoke({"text": TEXT})
            return blocks[0]["text"]

        return await run(calls, call)

    if session:
        async with client.session("s") as s:
            return await timed(await load_mcp_tools(s))
    seconds = await timed(await client.get_tools())
    if module == "toolbridge":
        await client.aclose()
    return seconds


async def fastmcp_client(calls: int, server: dict) -> float:
    from fastmcp import Client

    async with Client({"mcpServers": {"s": server}}) as client:

        async def call() -> str:
            result = await client.call_tool("echo", {"text": TEXT})
            return result.content[0].text

        return await run(calls, call)


def main() -> None:
    client, _mode, calls, server = sys.argv[1], sys.argv[2], int(sys.argv[3]), json.loads(sys.argv[4])
    if client == "toolbridge":
        seconds = asyncio.run(toolbridge_client(calls, server))
    elif client == "toolbridge-langchain":
        seconds = asyncio.run(langchain_client(calls, server, "toolbridge", False))
    elif client == "langchain":
        seconds = asyncio.run(langchain_client(calls, server, "langchain", False))
    elif client == "langchain-session":
        seconds = asyncio.run(langchain_client(calls, server, "langchain", True))
    elif client == "fastmcp":
        seconds = asyncio.run(fastmcp_client(calls, server))
    else:
        raise SystemExit(f"unknown client {client}")
    print(json.dumps({"calls": calls, "seconds": seconds}), flush=True)


if __name__ == "__main__":
    main()
