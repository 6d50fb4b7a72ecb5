"""A server that asks its client for elicitation and for sampling, written
with the Python `mcp` 2.x SDK: over 2026-07-28 it asks in an input-required
result (SEP-2322) and runs the tool on the client's retry. It refuses the
2025-11-25 `initialize` handshake (the SDK serves both generations; this one
is 2026-07-28 only), so the gateway cannot reach it over a 2025-11-25
connection and ask its clients with the server's own requests. Behind
`toolbridge serve` a 2025-11-25 session client (the TypeScript SDK) must be
asked with requests of its own, and its answers must come back to this
server; each tool's result says what it got, so a test can tell.

Usage: python asking_fixture_2026.py   (stdio)

Tools (each result ends with " [over VERSION]", the protocol version of the
call that ran the tool, so a test can tell which generation reached it):
  ask_name    asks "What is your name?" (a form with `name`), then says
              "Hello, NAME!".
  ask_model   samples the client's model with the prompt `prompt`, then
              says "The model said: TEXT (MODEL)".
"""

from typing import Annotated

from mcp.server.mcpserver import (
    AcceptedElicitation,
    Context,
    Elicit,
    ElicitationResult,
    MCPServer,
    Resolve,
    Sample,
)
from mcp.shared.exceptions import MCPError
from mcp_types import CreateMessageResult, SamplingMessage, TextContent
from pydantic import BaseModel


async def no_initialize(ctx, call_next):
    """Refuses the 2025-11-25 handshake: this server speaks 2026-07-28 only."""
    if ctx.method == "initialize":
        raise MCPError(code=-32602, message="asking-fixture-2026 speaks 2026-07-28 only")
    return await call_next(ctx)


server = MCPServer("asking-fixture-2026", middleware=[no_initialize])


class Name(BaseModel):
    name: str


def ask_for_name() -> Elicit[Name]:
    return Elicit("What is your name?", Name)


def sample_model(prompt: str) -> Sample:
    message = SamplingMessage(role="user", content=TextContent(type="text", text=prompt))
    return Sample([message], max_tokens=50)


@server.tool()
async def ask_name(
    who: Annotated[ElicitationResult[Name], Resolve(ask_for_name)],
    ctx: Context,
) -> str:
    """Asks the user's name, then greets them."""
    if not isinstance(who, AcceptedElicitation):
        return f"no name given ({who.action}) [over {ctx.protocol_version}]"
    return f"Hello, {who.data.name}! [over {ctx.protocol_version}]"


@server.tool()
async def ask_model(
    prompt: str,
    answer: Annotated[CreateMessageResult, Resolve(sample_model)],
    ctx: Context,
) -> str:
    """Samples the client's model with `prompt`, then says what it said."""
    content = answer.content
    text = content.text if isinstance(content, TextContent) else repr(content)
    return f"The model said: {text} ({answer.model}) [over {ctx.protocol_version}]"


if __name__ == "__main__":
    server.run()
