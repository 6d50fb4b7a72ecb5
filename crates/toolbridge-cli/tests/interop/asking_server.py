"""A server whose prompt asks the client something before it answers
(`elicitation/create` mid-request), written with the Python `mcp` SDK 1.x
(2025-11-25: the question is a request to the client on the session).

Prompts:
  greet   asks "Whom should I greet?" (a form with `name`), then greets them.

Run: python asking_server.py (stdio).
"""

from pydantic import BaseModel
from mcp.server.fastmcp import Context, FastMCP

server = FastMCP("py-asking")


class Whom(BaseModel):
    name: str


@server.prompt()
async def greet(ctx: Context) -> str:
    """Asks whom to greet, then greets them."""
    answer = await ctx.elicit("Whom should I greet?", Whom)
    if answer.action != "accept":
        return "Nobody to greet."
    return f"Hello, {answer.data.name}!"


if __name__ == "__main__":
    server.run()
