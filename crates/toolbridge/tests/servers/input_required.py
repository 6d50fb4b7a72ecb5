"""An MCP server written with the Python `mcp` 2.x SDK whose tool needs the
client's input: an elicitation (the user's name) and its roots. On protocol
2026-07-28 the SDK asks for both in an input-required result (SEP-2322) and
the client retries; on 2025-11-25 it sends them as requests mid-call.

Run: python input_required.py  (stdio)
"""

from typing import Annotated

from mcp.server.mcpserver import (
    AcceptedElicitation,
    Context,
    ElicitationResult,
    Elicit,
    ListRoots,
    MCPServer,
    Resolve,
)
from mcp_types import ListRootsResult
from pydantic import BaseModel

server = MCPServer("input-required-test")


class Name(BaseModel):
    name: str


def ask_name() -> Elicit[Name]:
    return Elicit("What is your name?", Name)


def ask_roots() -> ListRoots:
    return ListRoots()


@server.tool()
def greet(
    who: Annotated[ElicitationResult[Name], Resolve(ask_name)],
    where: Annotated[ListRootsResult, Resolve(ask_roots)],
) -> str:
    """Greets the user by the name they give, naming the client's roots."""
    if not isinstance(who, AcceptedElicitation):
        return f"no name given ({who.action})"
    roots = ", ".join(str(root.uri) for root in where.roots) or "none"
    return f"Hello, {who.data.name}! Roots: {roots}"


if __name__ == "__main__":
    server.run()
