"""A streamable HTTP MCP server built with the Python `mcp` SDK 1.x
(.deps/py1), for toolbridge's Python tests: its `header` tool answers the
value of one HTTP header of the request that carried the call, so a test
sees which headers a client sent.

Binds 127.0.0.1 on a free port and prints the port on its first stdout
line before it serves (the test waits for that line, not for a time)."""

import socket
import sys

import anyio
import uvicorn
from mcp.server.fastmcp import Context, FastMCP

mcp = FastMCP("py-sdk-http-test", stateless_http=True)


@mcp.tool()
def header(name: str, ctx: Context) -> str:
    """The value of the request's HTTP header `name` ("" when absent)."""
    request = ctx.request_context.request
    return request.headers.get(name, "") if request is not None else ""


async def main() -> None:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen()
    print(sock.getsockname()[1], flush=True)
    config = uvicorn.Config(mcp.streamable_http_app(), log_level="warning")
    await uvicorn.Server(config).serve(sockets=[sock])


if __name__ == "__main__":
    sys.exit(anyio.run(main))
