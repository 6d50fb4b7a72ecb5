"""A server that asks its client for elicitation and for sampling, written
with the Python `mcp` 2.x SDK: over 2026-07-28 it asks in an input-required
result (SEP-2322) and runs the tool on the client's retry. Behind
`toolbridge serve` a 2025-11-25 session client (the TypeScript SDK) must be
asked with requests of its own, and its answers must come back to this
server; each tool's result says what it got, so a test can tell.

Usage: python asking_fixture_2026.py   (stdio)

Tools:
  ask_name    asks "What is your name?" (a form with `name`), then says
              "Hello, NAME!".
  ask_model   samples the client's model with the prompt `prompt`, then
              says "The model said: TEXT (MODEL)".
"""

from typing import Annotated

from mcp.server.mcpserver import (
    AcceptedElicitation,
    Elicit,
    ElicitationResult,
    MCPServer,
    Resolve,
    Sample,
)
from mcp_types import CreateMessageResult, SamplingMessage, TextContent
from pydantic import BaseModel

server = MCPServer("asking-fixture-2026")


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
) -> str:
    """Asks the user's name, then greets them."""
    if not isinstance(who, AcceptedElicitation):
        return f"no name given ({who.action})"
    return f"Hello, {who.data.name}!"


@server.tool()
async def ask_model(
    prompt: str,
    answer: Annotated[CreateMessageResult, Resolve(sample_model)],
) -> str:
    """Samples the client's model with `prompt`, then says what it said."""
    content = answer.content
    text = content.text if isinstance(content, TextContent) else repr(content)
    return f"The model said: {text} ({answer.model})"


if __name__ == "__main__":
    server.run()
