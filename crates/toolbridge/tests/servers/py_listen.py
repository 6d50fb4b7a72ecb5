"""A server whose tool list changes and whose resource is updated on demand,
written with the Python `mcp` SDK 2.x, which speaks 2026-07-28: it sends
list changes and resource updates only on `subscriptions/listen` streams.

Tools:
  add_tool   adds the tool "added", then publishes a tools list change;
  touch      publishes an update of the resource note://one.

Run: python py_listen.py (stdio).
"""

from mcp.server.mcpserver import Context, MCPServer

server = MCPServer("py-listen")


@server.resource("note://one")
def one() -> str:
    """The resource `touch` updates."""
    return "one"


def added() -> str:
    """The tool `add_tool` adds."""
    return "added"


@server.tool()
async def add_tool(ctx: Context) -> str:
    """Adds the tool "added" and says the tool list changed."""
    server.add_tool(added)
    await ctx.notify_tools_changed()
    return "added"


@server.tool()
async def touch(ctx: Context) -> str:
    """Says note://one was updated."""
    await ctx.notify_resource_updated("note://one")
    return "touched"


if __name__ == "__main__":
    server.run()
