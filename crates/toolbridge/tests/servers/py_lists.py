"""A server whose prompt and resource lists change on demand, written with
the Python `mcp` SDK 1.x (2025-11-25: list changes are notifications on the
session; the 2.x SDK sends them on `subscriptions/listen` streams only).

Tools:
  add_prompt    adds the prompt "added", then sends notifications/prompts/list_changed;
  add_resource  adds the resource "note://added", then sends
                notifications/resources/list_changed.

Run: python py_lists.py (stdio).
"""

import anyio
from mcp.server.fastmcp import Context, FastMCP
from mcp.server.fastmcp.prompts import Prompt
from mcp.server.fastmcp.resources import TextResource
from mcp.server.lowlevel.server import NotificationOptions
from mcp.server.stdio import stdio_server

server = FastMCP("py-lists")


@server.prompt()
def first() -> str:
    """The prompt there from the start."""
    return "first"


@server.resource("note://first")
def first_note() -> str:
    """The resource there from the start."""
    return "first"


def added() -> str:
    """A prompt added while the server runs."""
    return "added"


@server.tool()
async def add_prompt(ctx: Context) -> str:
    """Adds the prompt "added" and says the prompt list changed."""
    server.add_prompt(Prompt.from_function(added, name="added"))
    await ctx.session.send_prompt_list_changed()
    return "prompt added"


@server.tool()
async def add_resource(ctx: Context) -> str:
    """Adds the resource note://added and says the resource list changed."""
    server.add_resource(TextResource(uri="note://added", name="added", text="added"))
    await ctx.session.send_resource_list_changed()
    return "resource added"


async def main() -> None:
    # FastMCP's run() declares no list changes; this server makes them.
    lowlevel = server._mcp_server
    options = lowlevel.create_initialization_options(
        NotificationOptions(prompts_changed=True, resources_changed=True)
    )
    async with stdio_server() as (read, write):
        await lowlevel.run(read, write, options)


if __name__ == "__main__":
    anyio.run(main)
