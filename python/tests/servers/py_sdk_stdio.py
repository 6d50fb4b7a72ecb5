"""A stdio MCP server built with the Python `mcp` SDK, for toolbridge's
Python tests: tools with progress and elicitation, a prompt, a resource and
a completion. Runs on the SDK 2.x (.deps/py2: protocol 2026-07-28, where
`ctx.elicit` has no back-channel over stdio) and 1.x (.deps/py1: elicitation
as a server-to-client request)."""

from pydantic import BaseModel

try:
    from mcp.server.mcpserver import Context, MCPServer
except ImportError:  # the SDK 1.x
    from mcp.server.fastmcp import Context, FastMCP as MCPServer
from mcp.types import Completion

mcp = MCPServer("py-sdk-test")


class Answer(BaseModel):
    color: str


@mcp.tool()
def add(a: int, b: int) -> int:
    """Adds two numbers."""
    return a + b


@mcp.tool()
def fail(message: str) -> str:
    """Always fails with the message."""
    raise ValueError(message)


@mcp.tool()
async def count(steps: int, ctx: Context) -> str:
    """Reports progress `steps` times."""
    for i in range(1, steps + 1):
        await ctx.report_progress(i, steps, f"step {i}")
    return f"counted {steps}"


@mcp.tool()
async def ask_color(ctx: Context) -> str:
    """Asks the user for a color."""
    result = await ctx.elicit("Which color?", Answer)
    if result.action == "accept" and result.data is not None:
        return f"color: {result.data.color}"
    return f"no color ({result.action})"


@mcp.tool()
async def note(text: str, ctx: Context) -> str:
    """Sends `text` as a log message, then returns it."""
    await ctx.info(text)
    return text


@mcp.prompt()
def greet(name: str) -> str:
    """Greets someone."""
    return f"Please greet {name}."


@mcp.resource("note://hello", mime_type="text/plain")
def hello_note() -> str:
    """A note."""
    return "hello from a resource"


@mcp.completion()
async def complete(ref, argument, context):
    if argument.name == "name":
        names = ["Ada", "Alan", "Grace"]
        return Completion(values=[n for n in names if n.startswith(argument.value)])
    return None


if __name__ == "__main__":
    mcp.run("stdio")
