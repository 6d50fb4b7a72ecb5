"""An MCP server written with the Python `mcp` SDK (2.x) whose one tool logs
before it answers: `whisper` sends the log message "about to say TEXT", then
returns TEXT. The gateway tests use it to see that a log message sent during
a stateless (2026-07-28) call still reaches the client, before the result.

Run: python logging_server.py   (stdio)
"""

import warnings

from mcp.server.mcpserver import Context, MCPServer

# Logging is deprecated in 2026-07-28 (SEP-2577) but still carried: the test needs it.
warnings.filterwarnings("ignore", message="The logging capability is deprecated")

server = MCPServer("py-logging")


@server.tool()
async def whisper(text: str, ctx: Context) -> str:
    """Logs "about to say TEXT", then returns TEXT."""
    await ctx.info(f"about to say {text}")
    return text


if __name__ == "__main__":
    server.run()
