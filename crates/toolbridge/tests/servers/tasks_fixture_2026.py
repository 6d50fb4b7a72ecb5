"""The one tool of the conformance suite's `tasks-mrtr-composition` scenario
(0.2.0-alpha.12) that needs a 2026-07-28 server: written with the Python
`mcp` 2.x SDK, which asks for a tool's input in an input-required result
(SEP-2322) and runs the tool on the client's retry. It knows nothing of
tasks; behind `toolbridge serve` the retry outlasts the gateway's
synchronous window and becomes the gateway's task.

Usage: python tasks_fixture_2026.py   (stdio)

Tools:
  test_tool_with_task   asks the user's name (input required), then, on
                        the retry, takes a second and says "Hello, NAME!".
"""

from typing import Annotated

import anyio
from mcp.server.mcpserver import AcceptedElicitation, Elicit, ElicitationResult, MCPServer, Resolve
from pydantic import BaseModel

server = MCPServer("tasks-fixture-2026")


class Name(BaseModel):
    name: str


def ask_name() -> Elicit[Name]:
    return Elicit("What is your user_name?", Name)


@server.tool()
async def test_tool_with_task(
    who: Annotated[ElicitationResult[Name], Resolve(ask_name)],
) -> str:
    """Asks the user's name, then greets them after a second."""
    await anyio.sleep(1)
    if not isinstance(who, AcceptedElicitation):
        return f"no name given ({who.action})"
    return f"Hello, {who.data.name}!"


if __name__ == "__main__":
    server.run()
