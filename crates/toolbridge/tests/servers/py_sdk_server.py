"""A small MCP server written with the Python `mcp` SDK (2.x), for interop tests.

Run: python py_sdk_server.py [stdio|sse|streamable-http] [--port N]
HTTP transports bind to 127.0.0.1.
"""

import base64
import sys

from mcp.server.mcpserver import Context, Image, MCPServer
from mcp.server.mcpserver.exceptions import ToolError

# A 1x1 PNG.
PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC"
)

server = MCPServer("py-sdk-test")


@server.tool()
def echo(text: str) -> str:
    """Echo the text back unchanged."""
    return text


@server.tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@server.tool()
def image() -> Image:
    """Return a 1x1 PNG."""
    return Image(data=PNG, format="png")


@server.tool()
def fail(message: str) -> str:
    """Always fails with the given message."""
    raise ToolError(message)


@server.tool()
async def chatty(ctx: Context) -> str:
    """Log one message at each of debug, info, warning and error, then answer."""
    for level in ("debug", "info", "warning", "error"):
        await ctx.log(level, f"{level} from chatty", logger_name="chatty")
    return "said it all"


if __name__ == "__main__":
    transport = sys.argv[1] if len(sys.argv) > 1 else "stdio"
    if transport == "stdio":
        server.run()
    else:
        port = int(sys.argv[sys.argv.index("--port") + 1])
        server.run(transport, host="127.0.0.1", port=port)
